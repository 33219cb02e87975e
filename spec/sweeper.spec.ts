import { describe, expect, it } from 'vitest'
import { type Id, createTable } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { randomUUID } from 'node:crypto'
import { IdIndex, SHARD_ROWS, SINGLE_SHARD_ROWS } from '../src/rows/id-index.js'
import { RowStore, type SweepCursor, newSweepCursor } from '../src/rows/row-store.js'
import { SWEEP_SLICE } from '../src/owner/sweep-timer.js'

/** Runs `cursor`'s walk over `rows` at `now` to its end, a slice of SWEEP_SLICE at a time: the rows it reclaimed, and the slices it took. */
function sweepToTheEnd(rows: RowStore<number>, cursor: SweepCursor, now: number): { swept: number; slices: number } {
  let swept = 0
  let slices = 0
  while (!cursor.done) {
    swept += rows.sweep(cursor, now, SWEEP_SLICE)
    slices++
  }
  return { swept, slices }
}

describe('the sweeper reclaims expired rows on its tick', () => {
  it('reclaims expired rows every sweepInterval, counting swept and sweeps, and keeps live ones', async () => {
    const clock = manualClock(0)
    const table = createTable<number | undefined, Id>({ ttl: 1_000, jitter: 0, sweepInterval: 100, clock })
    await Promise.all([1, 2, 3].map((id) => table.fetch(id, () => id)))
    clock.set(500)
    await table.fetch(4, () => 4) // expires at 1500
    clock.set(1_100) // the pass at 1000 reclaimed the rows expiring at 1000
    expect(table.stats()).toMatchObject({ swept: 3, size: 1, sweeps: 11 })
    clock.set(1_700)
    expect(table.stats()).toMatchObject({ swept: 4, size: 0 })
    await table.close()
  })

  it('a row replaced before its old expiry is not reclaimed at the old expiry', async () => {
    const clock = manualClock(0)
    const table = createTable<string | undefined, Id>({ ttl: 1_000, jitter: 0, sweepInterval: 100, clock })
    await table.fetch('k', () => 'old')
    clock.set(900)
    await table.put('k', 'new') // now expires at 1900
    clock.set(1_200)
    expect(table.stats()).toMatchObject({ swept: 0, size: 1 })
    expect(await table.fetch('k', () => 'loaded')).toBe('new')
    await table.close()
  })

  it('a pass starts at most once every max(sweepInterval, ttl / 16) ms, whatever the tick', async () => {
    const clock = manualClock(0)
    const table = createTable<number | undefined, Id>({ ttl: 64_000, jitter: 0, sweepInterval: 1_000, clock })
    await table.fetch(1, () => 1)
    clock.set(10_000) // ticks at 1 s, 2 s, … 10 s; passes start at 1 s, 5 s and 9 s (a period of 64 s / 16 = 4 s)
    expect(table.stats()).toMatchObject({ sweeps: 3, swept: 0, size: 1 })
    await table.close()
  })

  it('1,000,000 rows expiring at once are reclaimed by one pass, in slices of about SWEEP_SLICE rows (one rebuilt shard)', () => {
    const rows = new RowStore<number>(1_000_000)
    for (let i = 0; i < 1_000_000; i++) rows.write(i, i, 900, 0)
    const cursor = newSweepCursor()
    let slices = 0
    let longest = 0
    while (!cursor.done) {
      const swept = rows.sweep(cursor, 1_000, SWEEP_SLICE)
      longest = Math.max(longest, swept)
      slices++
    }
    expect(rows.size).toBe(0)
    expect(longest).toBeLessThanOrEqual(SWEEP_SLICE * 1.25) // a shard holds SHARD_ROWS (= SWEEP_SLICE) rows, give or take
    expect(slices).toBeLessThanOrEqual(Math.ceil(1_000_000 / (SWEEP_SLICE * 0.75)))
  })

  it('a slice walks at most SWEEP_SLICE rows, live or not, and a pass walks each row once', () => {
    const rows = new RowStore<number>(100_001)
    for (let i = 0; i < 100_000; i++) rows.write(i, i, 60_000, 0)
    rows.write('due', 0, 500, 0)
    const { swept, slices } = sweepToTheEnd(rows, newSweepCursor(), 1_000)
    expect(swept).toBe(1)
    expect(rows.size).toBe(100_000)
    expect(slices).toBeLessThanOrEqual(Math.ceil(100_001 / SWEEP_SLICE) + 1)
  })

  it('ids spread over the index’s shards, so no shard holds much more than its share', () => {
    const index = new IdIndex(1_000_000)
    expect(index.shards).toBe(2 ** Math.ceil(Math.log2(1_000_000 / SHARD_ROWS)))
    for (const ids of [Array.from({ length: 200_000 }, (_, i) => `user:${i}`), Array.from({ length: 200_000 }, (_, i) => i), Array.from({ length: 200_000 }, () => randomUUID())]) {
      const counts = new Array<number>(index.shards).fill(0)
      for (const id of ids) counts[index.shardOf(id)]!++
      const share = ids.length / index.shards
      expect(Math.max(...counts)).toBeLessThan(share * 1.25)
      expect(Math.min(...counts)).toBeGreaterThan(share * 0.75)
    }
    expect(new IdIndex(SINGLE_SHARD_ROWS).shards).toBe(1)
  })

  it('a large expiring cohort is reclaimed through the clock, one slice per timer', async () => {
    const clock = manualClock(0)
    const table = createTable<number | undefined, Id>({ ttl: 1_000, jitter: 0, sweepInterval: 1_000, clock, capacity: 100_000 })
    for (let i = 0; i < 50_000; i++) await table.put(i, i)
    const slices: number[] = []
    table.events.on('sweep', ({ swept }) => slices.push(swept))
    clock.set(999)
    expect(table.stats().swept).toBe(0)
    clock.advance(1) // the tick at 1 s starts a pass; each further slice is a 0 ms timer, run within this advance
    expect(table.stats()).toMatchObject({ swept: 50_000, size: 0, sweeps: 1 })
    expect(slices.length).toBeGreaterThanOrEqual(Math.ceil(50_000 / SWEEP_SLICE))
    expect(Math.max(...slices)).toBeLessThanOrEqual(SWEEP_SLICE * 1.25)
    await table.close()
  })

  it('a table drives the slices itself: a large expiring cohort is fully reclaimed through the clock', async () => {
    const clock = manualClock(0)
    const table = createTable<number | undefined, Id>({ ttl: 1_000, jitter: 0, sweepInterval: 1_000, clock, capacity: 100_000 })
    for (let i = 0; i < 50_000; i++) await table.put(i, i)
    clock.set(2_000)
    expect(table.stats()).toMatchObject({ swept: 50_000, size: 0 })
    await table.close()
  })

  it('a pass puts off the shards wholly reclaimable within two ticks, and the walk of those alone drops each whole', () => {
    const rows = new RowStore<number>(300_001)
    for (let i = 0; i < 300_000; i++) rows.write(i, i, 1_000 + (i % 1_000), 0) // reclaimable from 1000 to 1999
    const putOff: number[] = []
    const pass = newSweepCursor(undefined, { into: putOff, wholeBy: 2_000, dueSince: 0 })
    expect(sweepToTheEnd(rows, pass, 1_000).swept).toBe(0)
    expect(putOff.length).toBe(new IdIndex(300_001).shards)
    rows.write('late', 0, 9_000, 0) // its shard was put off, then written to: walked, not dropped
    const { swept, slices } = sweepToTheEnd(rows, newSweepCursor(putOff), 2_000)
    expect(swept).toBe(300_000)
    expect(rows.size).toBe(1)
    expect(rows.has('late')).toBe(true)
    expect(slices).toBeLessThanOrEqual(putOff.length) // a shard per slice at most: no shard is walked twice
  })

  it('a cohort expiring over two seconds is reclaimed whole at one tick, its first row within a sweep period and a tick of its expiry', async () => {
    const clock = manualClock(0)
    let draw = 0
    // ttl 57.5 s ± 1 s: expiries from 56.5 s to 58.5 s; ticks every second, passes every 3.75 s (at 1 s, 5 s, ... 57 s, 61 s)
    const table = createTable<number | undefined, Id>({ ttl: 57_500, jitter: 1_000 / 57_500, sweepInterval: 1_000, clock, random: () => (draw++ % 1_000) / 1_000 })
    for (let i = 0; i < 1_000; i++) await table.put(i, i)
    clock.set(58_999) // the pass at 57 s puts the shard off, the tick at 58 s puts it off again (it is not all expired yet)
    expect(table.stats()).toMatchObject({ swept: 0, size: 1_000 })
    clock.set(59_000) // every row reclaimable: dropped whole; the first expired 2.5 s ago, within 3.75 s + 1 s
    expect(table.stats()).toMatchObject({ swept: 1_000, size: 0 })
    await table.close()
  })

  it('a put-off shard written to before its walk is walked as a pass would: its expired rows go, its live ones stay, the rest go by the next pass', async () => {
    const clock = manualClock(0)
    let draw = 0
    const table = createTable<number | undefined, Id>({ ttl: 57_500, jitter: 1_000 / 57_500, sweepInterval: 1_000, clock, random: () => (draw++ % 1_000) / 1_000 })
    for (let i = 0; i < 1_000; i++) await table.put(i, i)
    clock.set(57_500) // put off by the pass at 57 s
    await table.put('late', -1) // expires near 115 s
    clock.set(58_000) // the walk of the put-off shard: not all reclaimable, so walked
    const atWalk = table.stats().swept
    expect(atWalk).toBeGreaterThanOrEqual(700) // expiries from 56.5 s to 58 s: three quarters
    expect(atWalk).toBeLessThan(1_000)
    clock.set(61_000) // the next pass reclaims the rest, within 3.75 s + 1 s of their expiry
    expect(table.stats()).toMatchObject({ swept: 1_000, size: 1 })
    await table.close()
  })

  it('stops with the table: no timer is left behind', async () => {
    const clock = manualClock(0)
    const table = createTable<number | undefined, Id>({ sweepInterval: 100, clock })
    expect(clock.pending()).toBe(1)
    await table.close()
    expect(clock.pending()).toBe(0)
  })
})
