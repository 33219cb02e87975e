/**
 * W5's tag child: `node --expose-gc --import tsx bench/tag-memory-child.ts <tags>`. One EchoStore
 * table (no L2, ttl 1 s, a manual clock) where each update of an entity invalidates its own tag
 * (`user:<i>`): <tags> rows, each loaded with its one tag and then invalidated, 20 per ms of the
 * clock, so rows expire and the sweeper reclaims them all along. The heap is read (after forced gc)
 * once the first tenth of the tags went through and every row they covered expired and was swept,
 * and again likewise after the rest; prints one JSON line: bytes retained per distinct tag
 * invalidated = growth / the tags invalidated in between (what the table keeps of a tag once
 * nothing it covered remains).
 */
import { createTable } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { canCollect, collect } from './lib/gc.js'

/** What the child prints (one JSON line on stdout). */
export interface TagMemoryReport {
  tags: number
  bytesPerTag: number
  heapBytes: number
  rowsHeld: number
}

const TTL = 1_000
const PER_MS = 20

function used(): number {
  const m = process.memoryUsage()
  return m.heapUsed + m.external
}

/** Lets the owner handle what the clock's timers posted (sweeps and their slices). */
function turn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve))
}

async function main(): Promise<void> {
  const tags = Number(process.argv[2])
  if (!Number.isInteger(tags) || tags < 100) throw new Error('usage: tag-memory-child.ts <tags ≥ 100>')
  if (!canCollect) throw new Error('tag-memory-child needs node --expose-gc')
  const clock = manualClock(0)
  const table = createTable<number>({ name: 'tag-memory', ttl: TTL, jitter: 0, sweepInterval: 100, clock })
  const ids = Array.from({ length: tags }, (_, i) => `user:${i}`)
  const update = async (id: string, i: number) => {
    await table.fetch(id, (_, { setTags }) => (setTags([id]), i))
    await table.invalidateTags([id])
  }
  /** Every row expires and is swept; two more sweep periods let a pass start after the last reclaim. */
  const drain = async () => {
    for (let ms = 0; ms < TTL + 400; ms += 50) {
      clock.advance(50)
      for (let i = 0; i < 4; i++) await turn()
    }
  }
  /** Updates the entities from `from` to `to`, `PER_MS` per ms of the clock. */
  const stream = async (from: number, to: number) => {
    for (let start = from; start < to; start += PER_MS) {
      await Promise.all(ids.slice(start, Math.min(start + PER_MS, to)).map((id, k) => update(id, start + k)))
      clock.advance(1)
      await turn()
    }
  }
  // The first tenth sizes the table's columns for the rows a stream holds at once; then the reading.
  const warm = Math.floor(tags / 10)
  await stream(0, warm)
  await drain()
  collect(4)
  const before = used()
  await stream(warm, tags)
  await drain()
  collect(4)
  const after = used()
  const report: TagMemoryReport = { tags: tags - warm, heapBytes: after - before, bytesPerTag: (after - before) / (tags - warm), rowsHeld: table.size }
  process.stdout.write(`${JSON.stringify(report)}\n`)
  if (ids.length !== tags) throw new Error('unreachable: keeps the ids alive until after the reading')
  await table.close()
  process.exit(0)
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
  process.exit(1)
})
