import { describe, expect, it } from 'vitest'
import { createTable, manualClock } from '../src/index.js'
import type { Id } from '../src/id.js'
import { RowStore } from '../src/row-store.js'
import { SWEEP_SLICE, Sweeper } from '../src/sweeper.js'

/** A row store that counts how many rows the sweeper looks at. */
class CountingRows<V> extends RowStore<V> {
  lookups = 0
  override reclaim(id: Id, now: number) {
    this.lookups++
    return super.reclaim(id, now)
  }
}

describe('the sweeper reclaims expired rows on its tick', () => {
  it('reclaims expired rows every sweepInterval, counting swept and sweeps, and keeps live ones', async () => {
    const clock = manualClock(0)
    const table = createTable<number>({ ttl: 1_000, jitter: 0, sweepInterval: 100, clock })
    await Promise.all([1, 2, 3].map((id) => table.fetch(id, () => id)))
    clock.set(500)
    await table.fetch(4, () => 4) // expires at 1500
    clock.set(1_100) // the bucket of rows expiring at 1000 has fully passed by 1100
    expect(table.stats()).toMatchObject({ swept: 3, size: 1, sweeps: 11 })
    clock.set(1_700)
    expect(table.stats()).toMatchObject({ swept: 4, size: 0 })
    await table.close()
  })

  it('a row replaced before its old expiry is not reclaimed by the stale index entry', async () => {
    const clock = manualClock(0)
    const table = createTable<string>({ ttl: 1_000, jitter: 0, sweepInterval: 100, clock })
    await table.fetch('k', () => 'old')
    clock.set(900)
    await table.put('k', 'new') // now expires at 1900
    clock.set(1_200)
    expect(table.stats()).toMatchObject({ swept: 0, size: 1 })
    expect(await table.fetch('k', () => 'loaded')).toBe('new')
    await table.close()
  })

  it('a tick looks only at buckets that have passed, never at the whole map', () => {
    const clock = manualClock(0)
    const rows = new CountingRows<number>(100_001)
    const sweeper = new Sweeper(clock, 1_000, 1_000, () => {})
    for (let i = 0; i < 100_000; i++) {
      rows.set(i, i, 60_000, 0)
      sweeper.track(i, 60_000)
    }
    rows.set('due', 0, 500, 0)
    sweeper.track('due', 500)
    expect(sweeper.reclaim(rows, 1_000)).toBe(1)
    expect(rows.lookups).toBe(1)
    expect(rows.size).toBe(100_000)
  })

  it('1,000,000 rows expiring at once are reclaimed in slices of at most SWEEP_SLICE, each asked for through the clock', () => {
    const clock = manualClock(0)
    const requests: boolean[] = []
    const rows = new RowStore<number>(1_000_000)
    const sweeper = new Sweeper(clock, 1_000, 1_000, (_, first) => requests.push(first))
    for (let i = 0; i < 1_000_000; i++) {
      rows.set(i, i, 900, 0)
      sweeper.track(i, 900)
    }
    let slices = 0
    let longest = 0
    while (rows.size > 0) {
      const before = rows.size
      sweeper.reclaim(rows, 1_000)
      longest = Math.max(longest, before - rows.size)
      slices++
      if (rows.size > 0) {
        expect(clock.pending()).toBe(1) // the continuation, through the clock
        clock.advance(0)
      }
    }
    expect(longest).toBeLessThanOrEqual(SWEEP_SLICE)
    expect(slices).toBe(Math.ceil(1_000_000 / SWEEP_SLICE))
    expect(requests.every((first) => first === false)).toBe(true)
    expect(sweeper.indexed()).toBe(0)
  })

  it('a table drives the slices itself: a large expiring cohort is fully reclaimed through the clock', async () => {
    const clock = manualClock(0)
    const table = createTable<number>({ ttl: 1_000, jitter: 0, sweepInterval: 1_000, clock, capacity: 100_000 })
    for (let i = 0; i < 50_000; i++) await table.put(i, i)
    clock.set(2_000)
    expect(table.stats()).toMatchObject({ swept: 50_000, size: 0 })
    await table.close()
  })

  it('stops with the table: no timer is left behind', async () => {
    const clock = manualClock(0)
    const table = createTable<number>({ sweepInterval: 100, clock })
    expect(clock.pending()).toBe(1)
    await table.close()
    expect(clock.pending()).toBe(0)
  })
})
