/**
 * Eviction with admission, as properties: whatever the reads, writes and refusals, a table never
 * holds more rows than its capacity and its counters keep their laws; the hand never takes a row
 * read since it last passed; and the coalescing law holds when a flight's fill is refused or evicts.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { type Id, type Stats, createTable } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { RowStore } from '../src/rows/row-store.js'
import { latchedLoader, settle } from './support/latch.js'

const CAPACITY = 4
const ids = fc.integer({ min: 0, max: 11 })

type Op = { kind: 'read'; id: number; absent: boolean } | { kind: 'put'; id: number } | { kind: 'invalidate'; id: number } | { kind: 'advance'; ms: number }

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('read' as const), id: ids, absent: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('put' as const), id: ids }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('invalidate' as const), id: ids }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 1, max: 400 }) }) },
)

function checkLaws(stats: Stats, reads: number): void {
  expect(stats.size).toBeLessThanOrEqual(CAPACITY)
  expect(stats.hits + stats.misses).toBe(reads)
  expect(stats.misses).toBe(stats.flights + stats.coalesced)
  expect(stats.loads).toBeLessThanOrEqual(stats.flights)
  expect(stats.inflight).toBe(0)
}

describe('eviction with admission', () => {
  it('size never exceeds capacity and the counter laws hold at every quiescent point', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(op, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 12 }), async (rounds) => {
        const clock = manualClock(0)
        const table = createTable<string | undefined, Id>({ capacity: CAPACITY, ttl: 500, negativeTtl: 200, jitter: 0, sweepInterval: 100, clock })
        let reads = 0
        for (const round of rounds) {
          // Each round's operations run concurrently, then the table settles: a quiescent point.
          const pending: Promise<unknown>[] = []
          for (const step of round) {
            if (step.kind === 'read') {
              reads++
              pending.push(table.fetch(step.id, () => (step.absent ? undefined : `v${step.id}`)))
            } else if (step.kind === 'put') pending.push(table.put(step.id, `p${step.id}`))
            else if (step.kind === 'invalidate') pending.push(table.invalidate(step.id))
            else clock.advance(step.ms)
          }
          await Promise.all(pending)
          await settle()
          checkLaws(table.stats(), reads)
        }
        await table.close()
      }),
      { numRuns: 150 },
    )
  })

  it('a row read since the hand last passed it is not the next victim (unless every row was read)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 40 }), fc.array(fc.nat(), { maxLength: 40 }), (capacity, readPicks) => {
        const rows = new RowStore<number>(capacity)
        for (let i = 0; i < capacity; i++) rows.write(i, i, 1e9, 0)
        const read = new Set(readPicks.map((pick) => pick % capacity))
        const clock = manualClock(0)
        for (const id of read) rows.live(id, clock)
        for (let i = 0; i < 20; i++) rows.countRequests('newcomer', 1) // asked for often: admitted over any victim
        expect(rows.evictFor('newcomer', Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY)).toBe(true)
        const evicted = Array.from({ length: capacity }, (_, id) => id).filter((id) => rows.find(id) < 0)
        expect(evicted).toHaveLength(1)
        if (read.size < capacity) expect(read.has(evicted[0]!)).toBe(false)
      }),
      { numRuns: 300 },
    )
  })

  it('the coalescing law holds when a flight’s fill is refused or evicts a row', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 2, max: 50 }), fc.boolean(), async (readers, hotBefore) => {
        const table = createTable<object | undefined, Id>({ capacity: 2, clock: manualClock() })
        await table.fetch('a', () => ({ a: 1 }))
        await table.fetch('b', () => ({ b: 1 }))
        if (hotBefore) for (let i = 0; i < 3; i++) await table.fetch('c', () => ({ earlier: i }))
        const origin = latchedLoader<object>()
        const before = table.stats()
        const answers = Array.from({ length: readers }, () => table.fetch('c', origin.loader))
        await settle()
        if (origin.calls.length === 0) {
          // c was admitted by an earlier fill and is a hit: no flight, nothing to coalesce.
          expect(table.stats().hits - before.hits).toBe(readers)
        } else {
          const answer = { c: 'the one answer' }
          origin.only().resolve(answer)
          for (const value of await Promise.all(answers)) expect(value).toBe(answer)
          const after = table.stats()
          expect(after.loads - before.loads).toBe(1)
          expect(after.coalesced - before.coalesced).toBe(readers - 1)
          expect(after.full_skips - before.full_skips + (after.evictions - before.evictions)).toBe(1)
        }
        expect(table.stats().size).toBe(2)
        await table.close()
      }),
      { numRuns: 60 },
    )
  })

  it('a victim that keeps refusing newer ids unread gives way: its weight halves every 8 refusals', () => {
    const capacity = 1_000
    const rows = new RowStore<number>(capacity)
    const clock = manualClock(0)
    // Every row asked for 9 times (9,000 additions: below the sketch's aging at 10,000), counted
    // once the store is full (the filter counts from half full on).
    for (let id = 0; id < capacity; id++) rows.write(id, id, 1e12, 0)
    for (let id = 0; id < capacity; id++) rows.countRequests(id, 9)
    rows.countRequests('new', 3)
    // The hand cycles the 1,000 unread rows: each refuses 'new' (3 ≤ 9), then (3 ≤ 9 >> 1 = 4) after
    // its 8th refusal; after its 16th, 9 >> 2 = 2 < 3 and the first of them gives way.
    for (let call = 1; call <= 16 * capacity; call++) expect(rows.evictFor('new', 0, Number.NEGATIVE_INFINITY)).toBe(false)
    expect(rows.evictFor('new', 0, Number.NEGATIVE_INFINITY)).toBe(true)
    expect(rows.has(0)).toBe(false)
    // A read wipes the count: row 1, read now, is passed over (its visited bit cleared); row 2,
    // unread with 16 refusals, gives way.
    expect(rows.live(1, clock)).toBe(1)
    rows.write('new', -1, 1e12, 0)
    rows.countRequests('newer', 3)
    expect(rows.evictFor('newer', 0, Number.NEGATIVE_INFINITY)).toBe(true)
    expect([rows.has(1), rows.has(2)]).toEqual([true, false])
  })
})
