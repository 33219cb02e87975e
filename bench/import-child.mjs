/**
 * W9's child process: `node bench/import-child.mjs <specifier>`, plain Node (no tsx, which would map
 * `echostore` to src/). Imports the specifier once, as an ES module, resolved from this package (so
 * `echostore` is its build, through the exports map), and prints one JSON line: how long the
 * import took in ms, and whether ioredis was loaded.
 */
import { createRequire } from 'node:module'
import { performance } from 'node:perf_hooks'

const specifier = process.argv[2]
if (specifier === undefined) throw new Error('usage: node bench/import-child.mjs <specifier>')
const start = performance.now()
await import(specifier)
const ms = performance.now() - start
// ioredis is CommonJS: whatever loads it, it lands in the CommonJS module cache.
const ioredis = Object.keys(createRequire(import.meta.url).cache).some((path) => path.includes('/node_modules/ioredis/'))
console.log(JSON.stringify({ ms, ioredis }))
