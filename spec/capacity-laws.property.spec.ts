/**
 * The capacity and counter laws under any mix of the features that write rows: reads (failing,
 * absent, tagged, forced), batch reads, puts (tagged), invalidations, tag invalidations, a
 * namespace's and the table's clear, and time passing, on a table full at 4 rows, with and without
 * a weight bound (`maxSize`) and grace. After every round of operations run together: `size ≤
 * capacity`, `weight ≤ maxSize`, hits + misses = reads, misses = flights + coalesced, loads ≤ flights,
 * nothing in flight, and the fail-safe, stale and batch bounds; once every row's time has passed,
 * nothing is held (`size` and `weight` 0): no row is ever lost to the index (a slot its id no longer
 * names is never swept nor evicted, and would hold capacity for good).
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { type Id, type Stats, createTable } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { settle } from './support/latch.js'

/** Rows the table holds at most. */
const CAP = 4
/** The weight bound, where one is set (a value weighs its length). */
const MAX = 50

/** One operation of a round. */
type Op =
  | { k: 'read'; id: number; ns: boolean; w: number; fail: boolean; absent: boolean; tag: number; force: boolean }
  | { k: 'many'; ids: number[]; w: number; ns: boolean }
  | { k: 'put'; id: number; w: number; tag: number; ns: boolean }
  | { k: 'inv'; id: number }
  | { k: 'tags'; tag: number }
  | { k: 'nsclear' }
  | { k: 'clear' }
  | { k: 'adv'; ms: number }

const idA = fc.integer({ min: 0, max: 9 })
const wA = fc.integer({ min: 0, max: 60 })
const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({ k: fc.constant('read' as const), id: idA, ns: fc.boolean(), w: wA, fail: fc.boolean(), absent: fc.boolean(), tag: fc.integer({ min: -1, max: 2 }), force: fc.boolean() }),
  },
  { weight: 3, arbitrary: fc.record({ k: fc.constant('many' as const), ids: fc.array(idA, { maxLength: 6 }), w: wA, ns: fc.boolean() }) },
  { weight: 3, arbitrary: fc.record({ k: fc.constant('put' as const), id: idA, w: wA, tag: fc.integer({ min: -1, max: 2 }), ns: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('inv' as const), id: idA }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('tags' as const), tag: fc.integer({ min: 0, max: 2 }) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('nsclear' as const) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('clear' as const) }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('adv' as const), ms: fc.integer({ min: 1, max: 700 }) }) },
)

/** The laws that hold between rounds, for a table that was asked `reads` reads. */
function laws(s: Stats, reads: number, weighted: boolean) {
  expect(s.size).toBeLessThanOrEqual(CAP)
  if (weighted) expect(s.weight).toBeLessThanOrEqual(MAX)
  expect(s.weight).toBeGreaterThanOrEqual(0)
  expect(s.hits + s.misses).toBe(reads)
  expect(s.misses).toBe(s.flights + s.coalesced)
  expect(s.loads).toBeLessThanOrEqual(s.flights)
  expect(s.inflight).toBe(0)
  expect(s.failsafe).toBeLessThanOrEqual(s.load_errors)
  expect(s.stale_hits).toBeLessThanOrEqual(s.misses)
  expect(s.batch_loads).toBeLessThanOrEqual(s.batch_ids)
  expect(s.batch_ids).toBeLessThanOrEqual(s.loads)
}

for (const weighted of [true, false]) {
  describe(weighted ? 'a table bounded by capacity and by weight' : 'a table bounded by capacity', () => {
    it('keeps the capacity and counter laws after every round, and holds nothing once time has passed', async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(fc.array(op, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 14 }), fc.boolean(), async (rounds, grace) => {
          const clock = manualClock(0)
          const table = createTable<string | undefined, Id>({
            capacity: CAP,
            ...(weighted ? { maxSize: MAX, sizeOf: (v: string) => v.length } : {}),
            ttl: 500,
            negativeTtl: 200,
            jitter: 0,
            sweepInterval: 100,
            loadTimeout: 1000,
            grace: grace ? 300 : 0,
            clock,
          })
          const ns = table.namespace('n')
          let reads = 0
          for (const round of rounds) {
            const pending: Promise<unknown>[] = []
            for (const s of round) {
              const t = 'ns' in s && s.ns ? ns : table
              if (s.k === 'read') {
                reads++
                pending.push(
                  t
                    .fetch(
                      s.id,
                      (_id, { setTags }) => {
                        if (s.tag >= 0) setTags([`t${s.tag}`])
                        if (s.fail) throw new Error('boom')
                        return s.absent ? undefined : 'x'.repeat(s.w)
                      },
                      { forceRefresh: s.force },
                    )
                    .catch(() => undefined),
                )
              } else if (s.k === 'many') {
                reads += s.ids.length
                pending.push(t.fetchMany(s.ids, (ids) => ids.map((id) => 'y'.repeat((s.w + Number(id)) % 61))).catch(() => undefined))
              } else if (s.k === 'put') pending.push(t.put(s.id, 'p'.repeat(s.w), s.tag >= 0 ? { tags: [`t${s.tag}`] } : {}))
              else if (s.k === 'inv') pending.push(table.invalidate(s.id))
              else if (s.k === 'tags') pending.push(table.invalidateTags([`t${s.tag}`]))
              else if (s.k === 'nsclear') pending.push(ns.clear())
              else if (s.k === 'clear') pending.push(table.clear())
              else clock.advance(s.ms)
            }
            await Promise.all(pending)
            await settle()
            laws(table.stats(), reads, weighted)
          }
          for (let i = 0; i < 40; i++) {
            clock.advance(200)
            await settle()
          }
          const end = table.stats()
          laws(end, reads, weighted)
          expect({ size: end.size, weight: end.weight }).toEqual({ size: 0, weight: 0 })
          await table.close()
        }),
        { numRuns: 300 },
      )
    })
  })
}
