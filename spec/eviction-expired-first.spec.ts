/**
 * Expired rows go first (README, Capacity), between sweeps too: a row the sweeper would reclaim
 * (past its expiry plus the grace, or stale by one of its tags) is taken by the hand that meets it
 * without the admission test, however often it was read; a row within its grace (it holds a graced
 * value) is weighed like a live one, and a tombstone younger than the flight bound stays.
 */
import { describe, expect, it } from 'vitest'
import { createTable } from '../src/index.js'
import { RowStore } from '../src/rows/row-store.js'
import { TagVersions } from '../src/tags/tag-versions.js'
import { manualClock } from '../src/testing.js'

/** Keeps every tombstone whose forget time is after this (as the owner's `keepTombstonesAfter` does, younger than the flight bound). */
const KEEP_AFTER = 5_000

describe('a full table takes a reclaimable row first, without the admission test', () => {
  it('a new id takes the place of a row expired past its grace, however often that row was read', () => {
    const rows = new RowStore<string>(2)
    const clock = manualClock(0)
    rows.write('a', 'A', 100, 0)
    rows.write('b', 'B', 10_000, 0)
    rows.countRequests('a', 15)
    rows.countRequests('b', 15)
    expect(rows.live('a', clock)).toBe('A') // visited
    expect(rows.live('b', clock)).toBe('B')
    // 'c' was never asked for: a live victim would refuse it.
    expect(rows.makeRoom('c', -1, 0, KEEP_AFTER, 200, false)).toBe(1)
    expect([rows.has('a'), rows.has('b')]).toEqual([false, true])
    expect(rows.write('c', 'C', 10_000, 0)).toBeGreaterThanOrEqual(0)
  })

  it('a row within its grace is weighed like a live one (it holds a graced value); past the grace it goes without the test', () => {
    const rows = new RowStore<string>(1, 1_000)
    rows.write('a', 'A', 100, 0)
    rows.countRequests('a', 15)
    expect(rows.makeRoom('c', -1, 0, KEEP_AFTER, 200, false)).toBe(-1) // within its grace: 'c' (never asked for) is refused
    expect(rows.graced('a', 200)).toBe('A')
    expect(rows.makeRoom('c', -1, 0, KEEP_AFTER, 1_100, false)).toBe(1) // expiry plus grace reached: what the sweeper reclaims
    expect(rows.has('a')).toBe(false)
  })

  it('a tombstone younger than the flight bound stays; one past its forget time goes without the test', () => {
    const rows = new RowStore<string>(3)
    rows.bury('young', 1, 9_000) // forget time after KEEP_AFTER: may fence a flight
    rows.bury('old', 1, 150) // forgotten at 150
    rows.write('live', 'L', 10_000, 0)
    for (const id of ['young', 'old', 'live']) rows.countRequests(id, 15)
    expect(rows.makeRoom('c', -1, 0, KEEP_AFTER, 200, false)).toBe(1)
    expect([rows.has('young'), rows.has('old'), rows.has('live')]).toEqual([true, false, true])
    rows.write('c', 'C', 10_000, 0)
    // Nothing reclaimable is left: the live row is weighed, and refuses an id never asked for.
    expect(rows.makeRoom('d', -1, 0, KEEP_AFTER, 200, false)).toBe(-1)
    expect(rows.has('young')).toBe(true)
  })

  it('a row stale by its tags goes without the test', () => {
    const tags = new TagVersions()
    const rows = new RowStore<string>(2, 0, tags)
    rows.write('a', 'A', 10_000, 0, -1, { keys: ['T'], born: 1 })
    rows.write('b', 'B', 10_000, 0)
    rows.countRequests('a', 15)
    rows.countRequests('b', 15)
    tags.raise('T', 2)
    expect(rows.makeRoom('c', -1, 0, KEEP_AFTER, 200, false)).toBe(1)
    expect([rows.has('a'), rows.has('b')]).toEqual([false, true])
  })

  it('on a maxSize table, an expired row frees its weight without the test, and the live rows are not weighed against the newcomer', () => {
    const rows = new RowStore<string>(100, 0, undefined, 100)
    const clock = manualClock(0)
    rows.write('a', 'A', 100, 0, -1, undefined, 60)
    rows.write('b', 'B', 10_000, 0, -1, undefined, 40)
    rows.countRequests('a', 15)
    rows.countRequests('b', 15)
    rows.live('a', clock)
    rows.live('b', clock)
    expect(rows.needsRoom(-1, 50)).toBe(true)
    expect(rows.makeRoom('c', -1, 50, KEEP_AFTER, 200, false)).toBe(1)
    expect([rows.has('a'), rows.has('b'), rows.weight]).toEqual([false, true, 40])
  })

  it('a table whose rows are stale by their tags (invalidateTags, a namespace clear) stores a new id at once, before any sweep', async () => {
    const clock = manualClock(0)
    const table = createTable<string>({ capacity: 2, ttl: 60_000, jitter: 0, clock })
    const acme = table.namespace('acme')
    for (let round = 0; round < 5; round++) {
      await table.fetch('a', (_, context) => (context.setTags(['T']), 'A'))
      await acme.fetch('b', () => 'B')
    }
    await table.invalidateTags(['T'])
    await acme.clear()
    expect([table.has('a'), acme.has('b'), table.size]).toEqual([false, false, 2])
    expect(await table.fetch('c', () => 'C')).toBe('C')
    await new Promise((resolve) => setImmediate(resolve))
    expect(table.has('c')).toBe(true)
    expect(table.stats()).toMatchObject({ full_skips: 0, evictions: 1, swept: 0, size: 2 })
    await table.close()
  })
})

describe('a full table takes a reclaimable row first, between sweeps (through the owner)', () => {
  it('a table whose rows expired before the sweeper reclaimed them stores a new id at once, however often they were read', async () => {
    const clock = manualClock(0)
    const table = createTable<string>({ capacity: 2, ttl: 100, jitter: 0, sweepInterval: 1_000_000, clock })
    for (let round = 0; round < 15; round++) {
      await table.fetch('a', () => 'A', { forceRefresh: round > 0 })
      await table.fetch('b', () => 'B', { forceRefresh: round > 0 })
    }
    clock.set(200)
    expect(await table.fetch('c', () => 'C')).toBe('C')
    await new Promise((resolve) => setImmediate(resolve))
    expect(table.has('c')).toBe(true)
    expect(table.stats()).toMatchObject({ full_skips: 0, evictions: 1, swept: 0, size: 2 })
    await table.close()
  })
})
