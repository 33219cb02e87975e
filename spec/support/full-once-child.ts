/**
 * A table that was full once, then runs below its capacity with steady churn (new ids filled, rows
 * expiring and swept one by one): prints, as JSON, the heap it retained per fill over `FILLS` fills
 * of that churn. Run by `spec/full-once-then-churn.spec.ts` as `node --expose-gc --import tsx`, so
 * the heap is measured after full collections, in a process of its own.
 */
import { setImmediate as tick } from 'node:timers/promises'
import { createTable } from '../../src/index.js'
import { manualClock } from '../../src/testing.js'

const CAPACITY = 10_000
const FILLS = 100_000
/** New ids per 100 ms step: with ttl 1 s, about half the capacity churns. */
const STEP = CAPACITY / 20

const gc = (globalThis as { gc?: () => void }).gc
if (gc === undefined) throw new Error('run with node --expose-gc')

function heap(): number {
  for (let i = 0; i < 3; i++) gc!()
  const { heapUsed, external } = process.memoryUsage()
  return heapUsed + external
}

const clock = manualClock(0)
const table = createTable<string>({ name: 'churn', ttl: 1_000, jitter: 0.1, clock, sweepInterval: 100, capacity: CAPACITY })
let next = 0
async function step(count: number): Promise<void> {
  const reads: Promise<unknown>[] = []
  for (let i = 0; i < count; i++) reads.push(table.fetch(`id-${next++}`, () => 'v'))
  await Promise.all(reads)
  clock.advance(100)
  await tick()
}
// A third of the capacity lives through the run; the churn fills the table once, then runs below it.
const long: Promise<unknown>[] = []
for (let i = 0; i < CAPACITY * 0.3; i++) long.push(table.fetch(`long-${i}`, (_id, context) => (context.setTtl(1e9), 'v')))
await Promise.all(long)
for (let i = 0; i < 20; i++) await step(STEP)
await step(CAPACITY * 0.3)
const evicted = table.stats().evictions
for (let i = 0; i < 30; i++) await step(STEP)
const before = heap()
let largest = 0
for (let filled = 0; filled < FILLS; filled += STEP) {
  await step(STEP)
  largest = Math.max(largest, table.size)
}
const retained = heap() - before
process.stdout.write(JSON.stringify({ bytesPerFill: retained / FILLS, evicted, largest, capacity: CAPACITY }))
await table.close()
