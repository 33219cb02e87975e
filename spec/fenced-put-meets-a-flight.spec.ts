/**
 * A put fenced while it is in progress (by a clear, a bus gap, a newer change, or an invalidation of
 * one of its tags) leaves a tombstone at its version where the id's row was, and fences the id's
 * flight as every change that writes the id's row does. A flight that started meanwhile, finding no
 * row, would otherwise trust that and store its answer in a second slot for an id the index already
 * names: one id, two rows, and a slot never swept nor evicted that holds capacity for good.
 */
import { describe, expect, it } from 'vitest'
import { type Id, createTable } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { latchedLoader, settle } from './support/latch.js'

function newTable(capacity: number) {
  const clock = manualClock(0)
  // ttl 500, flights bounded at 1 s: every row and tombstone is reclaimable well within 8 s.
  const table = createTable<string, Id>({ capacity, ttl: 500, jitter: 0, sweepInterval: 100, loadTimeout: 1_000, clock })
  const passTime = async () => {
    for (let i = 0; i < 40; i++) {
      clock.advance(200)
      await settle()
    }
  }
  return { table, passTime }
}

/** A put of `id` fenced by `fence` while a read of `id` (which found no row) is loading; the read then fills. */
async function fencedPutDuringLoad(table: ReturnType<typeof newTable>['table'], id: string, fence: 'tags' | 'clear'): Promise<void> {
  const { loader, calls } = latchedLoader<string>()
  const put = table.put(id, 'put', { tags: [`tag-${id}`] })
  const fenced = fence === 'tags' ? table.invalidateTags([`tag-${id}`]) : table.clear()
  const read = table.fetch(id, loader)
  expect(await put).toMatchObject({ applied: false }) // fenced: it left a tombstone at its version
  await fenced
  await settle()
  expect(calls).toHaveLength(1)
  calls[0]!.resolve('loaded')
  expect(await read).toBe('loaded')
  await settle()
}

describe('a fenced put meeting a flight that found no row', () => {
  for (const fence of ['tags', 'clear'] as const) {
    it(`(${fence}) one id holds one row, and every row is reclaimed once time passes`, async () => {
      const { table, passTime } = newTable(4)
      await fencedPutDuringLoad(table, 'a', fence)
      expect(table.stats().size).toBe(1) // one id, one row (its value or its tombstone)
      await passTime()
      expect(table.has('a')).toBe(false)
      expect(table.stats().size).toBe(0)
      await table.close()
    })
  }

  it('leaves the whole capacity to new ids once its rows have gone: three new ids fit a table of three', async () => {
    const { table, passTime } = newTable(3)
    await fencedPutDuringLoad(table, 'a', 'tags')
    await passTime()
    await fencedPutDuringLoad(table, 'b', 'tags')
    await passTime()
    expect(table.has('a') || table.has('b')).toBe(false) // nothing is held...
    for (const id of ['x', 'y', 'z']) await table.fetch(id, () => id)
    // ...so three new ids fit a capacity of 3 with no eviction and no refusal.
    expect(['x', 'y', 'z'].filter((id) => table.has(id))).toEqual(['x', 'y', 'z'])
    expect(table.stats()).toMatchObject({ size: 3, full_skips: 0, evictions: 0 })
    await table.close()
  })
})
