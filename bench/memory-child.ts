/**
 * W5's child process: `node --expose-gc --import tsx bench/memory-child.ts <contender> <rows>`.
 * Builds the ids, collects, reads heap + external, creates the contender's cache and fills
 * <rows> rows through `fetch` (concurrency 64, one shared row object), collects again and prints
 * one JSON line: bytes per row = (heap + external growth) / rows. The ids exist before and after,
 * so only what the cache itself holds is counted (its own key copies included).
 */
import { performance } from 'node:perf_hooks'
import { loadContender } from './contenders/index.js'
import { canCollect, collect } from './lib/gc.js'
import { runConcurrent } from './lib/pool.js'
import { makeIds } from './lib/random.js'
import { RESOLVED } from './lib/row.js'
import { sleep } from './lib/sleep.js'

/** What the child prints (one JSON line on stdout). */
export interface MemoryReport {
  contender: string
  rows: number
  heapBytes: number
  externalBytes: number
  bytesPerRow: number
  fillMs: number
  held: number | null
}

function used() {
  const m = process.memoryUsage()
  return { heap: m.heapUsed, external: m.external }
}

async function main(): Promise<void> {
  const [name, rowsArg] = process.argv.slice(2)
  if (name === undefined || rowsArg === undefined) throw new Error('usage: memory-child.ts <contender> <rows>')
  if (!canCollect) throw new Error('memory-child needs node --expose-gc')
  const rows = Number(rowsArg)
  const contender = await loadContender(name)
  const ids = makeIds('mem-', rows)
  collect(4)
  const before = used()
  const cache = contender.create({ ttl: 3_600_000, capacity: rows, loader: () => RESOLVED })
  const start = performance.now()
  await runConcurrent(rows, 64, (i) => cache.fetch(ids[i]!))
  const fillMs = performance.now() - start
  await sleep(20)
  collect(4)
  const after = used()
  const report: MemoryReport = {
    contender: name,
    rows,
    heapBytes: after.heap - before.heap,
    externalBytes: after.external - before.external,
    bytesPerRow: (after.heap - before.heap + after.external - before.external) / rows,
    fillMs,
    held: cache.size?.() ?? null,
  }
  process.stdout.write(`${JSON.stringify(report)}\n`)
  if (ids.length !== rows) throw new Error('unreachable: keeps ids alive until after the reading')
  await cache.close()
  process.exit(0)
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
  process.exit(1)
})
