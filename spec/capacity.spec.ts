/**
 * A full table: a new id takes the place of a row that was not read lately (SIEVE's victim) when
 * it was asked for more often than that row (TinyLFU admission); otherwise it is not stored
 * (`full_skips`), and its waiters still get their answer.
 */
import { describe, expect, it } from 'vitest'
import { type Id, createTable, localBus, memoryL2 } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { latchedLoader, settle } from './support/latch.js'

describe('capacity', () => {
  it('a fill for a new id that admission refuses is not stored (full_skips), but every waiter gets the value', async () => {
    const table = createTable<string | undefined, Id>({ capacity: 2, clock: manualClock() })
    // Asked for three times each once the table is half full (the filter counts from then on): a
    // forced refresh is a miss, so each is counted.
    for (let i = 0; i < 3; i++) for (const id of ['a', 'b']) await table.fetch(id, () => id.toUpperCase(), { forceRefresh: i > 0 })
    const origin = latchedLoader<string>()
    const readers = [table.fetch('c', origin.loader), table.fetch('c', origin.loader)]
    await settle()
    origin.only().resolve('C')
    expect(await Promise.all(readers)).toEqual(['C', 'C'])
    expect(table.stats()).toMatchObject({ size: 2, full_skips: 1, evictions: 0, fills: 6, loads: 7 })
    let loads = 0
    await table.fetch('c', () => (loads++, 'C'))
    expect(loads).toBe(1) // it was not stored
    await table.close()
  })

  it('a new id read more often than the victim takes its place (evictions), and is then a hit', async () => {
    const table = createTable<string | undefined, Id>({ capacity: 2, clock: manualClock() })
    await table.fetch('a', () => 'A')
    await table.fetch('b', () => 'B')
    let loads = 0
    const hot = () => (loads++, 'H')
    for (let i = 0; i < 5; i++) expect(await table.fetch('h', hot)).toBe('H')
    expect(table.stats()).toMatchObject({ size: 2, evictions: 1 })
    expect(loads).toBeLessThanOrEqual(2) // its second miss outweighs a row read once
    await table.close()
  })

  it('after filling 10,000 rows, 1,000 reads of a new hot id cost at most 2 loads (lru-cache: 1)', async () => {
    const table = createTable<number | undefined, Id>({ capacity: 10_000, clock: manualClock() })
    for (let i = 0; i < 10_000; i++) await table.fetch(i, () => i)
    let loads = 0
    for (let i = 0; i < 1_000; i++) await table.fetch('hot', () => (loads++, -1))
    expect(loads).toBeLessThanOrEqual(2)
    expect(table.stats()).toMatchObject({ size: 10_000, evictions: 1 })
    await table.close()
  })

  it('a row read often survives a scan of capacity × 10 one-off ids', async () => {
    const table = createTable<string | undefined, Id>({ capacity: 100, clock: manualClock() })
    let hotLoads = 0
    const hot = () => (hotLoads++, 'hot')
    for (let i = 0; i < 100; i++) await table.fetch(`warm-${i}`, () => 'w')
    for (let round = 0; round < 20; round++) await table.fetch('hot', hot)
    expect(table.has('hot')).toBe(true) // admitted by its second miss: it then outweighed a row read once
    const loadsBefore = hotLoads
    for (let i = 0; i < 1_000; i++) {
      await table.fetch(`scan-${i}`, () => 's')
      if (i % 10 === 0) await table.fetch('hot', hot)
    }
    expect(hotLoads).toBe(loadsBefore)
    expect(table.stats().size).toBeLessThanOrEqual(100)
    await table.close()
  })

  it('replacing an id’s row never counts as full', async () => {
    const clock = manualClock(0)
    const table = createTable<string | undefined, Id>({ capacity: 1, ttl: 100, jitter: 0, sweepInterval: 1e9, clock })
    await table.fetch('a', () => 'v1')
    clock.set(200) // expired, not swept: still held
    expect(await table.fetch('a', () => 'v2')).toBe('v2')
    await table.put('a', 'v3')
    expect(await table.fetch('a', () => 'never')).toBe('v3')
    expect(table.stats()).toMatchObject({ size: 1, full_skips: 0, evictions: 0 })
    await table.close()
  })

  it('a put for a new id on a full table goes through admission too', async () => {
    const table = createTable<string | undefined, Id>({ capacity: 1, clock: manualClock() })
    await table.put('a', 'A') // not counted: the filter counts once the table is half full
    await table.put('a', 'A') // counted: a asked for once
    await table.fetch('a', () => 'never') // a is read: the hand counts that read when it passes a
    await table.put('b', 'B') // asked for once, less often than a: refused
    await table.put('b', 'B') // as often as a: refused
    expect(table.stats()).toMatchObject({ size: 1, full_skips: 2, evictions: 0 })
    await table.put('b', 'B') // more often than a now: it takes a's place
    expect(table.stats()).toMatchObject({ size: 1, full_skips: 2, evictions: 1 })
    expect(await table.fetch('b', () => 'never')).toBe('B')
    await table.close()
  })

  it('a put that admission refuses stores nothing in L1 (full_skips) but still counts as applied: L2 and the bus still get it', async () => {
    const clock = manualClock(0)
    const l2 = memoryL2({ clock })
    const bus = localBus()
    const full = createTable<string, Id>({ name: 'p', capacity: 1, clock, l2, bus })
    const other = createTable<string, Id>({ name: 'p', clock, l2, bus })
    await other.fetch('b', () => 'old b') // another process holds b, and so does L2
    for (let i = 0; i < 4; i++) await full.fetch('a', () => 'A', { forceRefresh: i > 0 }) // a, asked for often, fills the table
    expect(await full.put('b', 'B')).toMatchObject({ applied: true, l2: 'written', broadcast: true })
    await settle()
    expect(full.stats()).toMatchObject({ full_skips: 1, evictions: 0, size: 1 })
    expect(full.has('b')).toBe(false)
    expect(full.has('a')).toBe(true)
    // The bus reached the other process: its old row is gone, and its next read finds the put in L2.
    expect(other.stats().coh_applied).toBe(1)
    expect(other.peek('b')).toBeUndefined()
    expect(await other.fetch('b', () => 'loaded')).toBe('B')
    // A process that never read b reads the put from L2, as does the refusing table itself.
    const cold = createTable<string, Id>({ name: 'p', clock, l2 })
    expect(await cold.fetch('b', () => 'loaded')).toBe('B')
    expect(await full.fetch('b', () => 'loaded')).toBe('B')
    // Nobody loaded b again: each read of it was answered by the put's L2 entry.
    expect([full.stats().loads, other.stats().loads, cold.stats().loads]).toEqual([4, 1, 0])
    expect([full.stats().l2_hits, other.stats().l2_hits, cold.stats().l2_hits]).toEqual([1, 1, 1])
    await Promise.all([full.close(), other.close(), cold.close()])
  })
})
