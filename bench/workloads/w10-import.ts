import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { pm, ratio, sig } from '../lib/format.js'
import { interleave } from '../lib/interleave.js'
import { median, spreadPct } from '../lib/stats.js'
import type { BenchContext, Metrics, WorkloadResult } from './context.js'

/** What is imported: the core entry, the Redis entry (for what ioredis costs), and lru-cache for reference. */
const PACKAGES = [{ name: 'echostore' }, { name: 'echostore/redis' }, { name: 'lru-cache' }]
/** Fresh processes per package: enough for a steady median, a few seconds in all. */
const RUNS = 9
/** The target for `import 'echostore'`, in ms: a cost an application's start-up does not notice beside its own modules. */
export const ROOT_IMPORT_BUDGET_MS = 25

/** One import in a fresh process (bench/import-child.mjs). */
interface ImportRun {
  ms: number
  ioredis: boolean
}

function importOnce(root: string, specifier: string): ImportRun {
  const child = spawnSync(process.execPath, [join(root, 'bench', 'import-child.mjs'), specifier], { cwd: root, encoding: 'utf8' })
  if (child.status !== 0) throw new Error(`W10: importing ${specifier} failed (${child.status ?? child.signal}): ${child.stderr}`)
  return JSON.parse(child.stdout.trim()) as ImportRun
}

/**
 * W10 import time: each package imported once in a fresh `node` process, timed inside it around the
 * `import()` (Node's own start-up excluded), interleaved, median of the runs. EchoStore is imported
 * from its build; the child also reports whether ioredis was loaded.
 */
export async function runW10(ctx: BenchContext): Promise<WorkloadResult> {
  const { root } = ctx.cfg
  if (!existsSync(join(root, 'dist', 'esm', 'index.js'))) throw new Error('W10 imports EchoStore from its build, and dist/ is missing: run `npm run build` (npm run bench does)')
  const runs = await interleave('W10 import', PACKAGES, RUNS, async ({ name }) => importOnce(root, name))
  const medianOf = (name: string) => median(runs.get(name)!.map((r) => r.ms))
  const reference = medianOf('lru-cache')
  const metrics: Metrics = new Map()
  const rows = PACKAGES.map(({ name }) => {
    const list = runs.get(name)!
    const ms = medianOf(name)
    const ioredis = list.every((r) => r.ioredis) ? 'yes' : list.some((r) => r.ioredis) ? 'in some runs' : 'no'
    metrics.set(name, { importMs: ms, ioredisLoaded: list.some((r) => r.ioredis) ? 1 : 0 })
    return [name, sig(ms), ratio(ms, reference), pm(spreadPct(list.map((r) => r.ms))), ioredis]
  })
  return {
    metrics,
    section: {
      id: 'W10',
      title: 'import time',
      method: `Each package imported once in a fresh \`node\` process (an ES module \`import()\`, timed inside the process, so Node's own start-up is not counted), ${RUNS} processes per package, interleaved; medians. EchoStore is imported from its build (\`dist/esm\`, through the package's \`exports\`). "ioredis loaded" is read from the CommonJS module cache after the import (ioredis is CommonJS, so however it is reached it lands there). Lower is better.`,
      tables: [{ headers: ['import', 'ms', '× lru-cache', 'spread', 'ioredis loaded'], rows }],
      notes: [
        '`echostore` loads two files of its own build (each entry is bundled, the part of xstate the owner uses inlined) and mitt, and never ioredis; `echostore/redis` adds ioredis and its dependencies, which only an application using Redis pays for.',
      ],
    },
  }
}
