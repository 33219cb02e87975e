/**
 * The reads beside `fetch`: `peek(id)` and `has(id)` answer from live rows only, synchronously,
 * with no load and no counter; `size` is the figure `stats().size` gives.
 */
import { describe, expect, it } from 'vitest'
import { type Id, createTable } from '../src/index.js'
import { manualClock } from '../src/testing.js'

describe('peek, has and size', () => {
  it('peek answers a live row’s value and has says it is there; neither loads nor counts', async () => {
    const clock = manualClock(0)
    const table = createTable<{ n: number } | undefined, Id>({ ttl: 1_000, jitter: 0, clock })
    const value = { n: 1 }
    await table.fetch('a', () => value)
    const before = table.stats()
    expect(table.peek('a')).toBe(value)
    expect(table.has('a')).toBe(true)
    expect(table.peek('nobody')).toBeUndefined()
    expect(table.has('nobody')).toBe(false)
    expect(table.stats()).toEqual(before)
    await table.close()
  })

  it('a negative row: peek answers undefined, has answers true (a fetch would be a hit)', async () => {
    const table = createTable<string | undefined, Id>({ clock: manualClock(0) })
    await table.fetch('gone', () => undefined)
    expect(table.peek('gone')).toBeUndefined()
    expect(table.has('gone')).toBe(true)
    await table.close()
  })

  it('an expired row, a graced row and a tombstone are not live: peek undefined, has false', async () => {
    const clock = manualClock(0)
    const table = createTable<string | undefined, Id>({ ttl: 1_000, jitter: 0, grace: 5_000, sweepInterval: 1e9, clock })
    await table.fetch('a', () => 'A')
    await table.fetch('b', () => 'B')
    await table.invalidate('b')
    expect([table.peek('b'), table.has('b')]).toEqual([undefined, false])
    clock.set(1_000)
    expect([table.peek('a'), table.has('a')]).toEqual([undefined, false])
    expect(table.size).toBe(2) // the graced row and the tombstone are still held
    await table.close()
  })

  it('size is stats().size through fills, tombstones, sweeps and clears', async () => {
    const clock = manualClock(0)
    const table = createTable<number | undefined, Id>({ ttl: 100, jitter: 0, sweepInterval: 10, clock })
    const same = () => expect(table.size).toBe(table.stats().size)
    same()
    for (let i = 0; i < 5; i++) await table.fetch(i, () => i)
    expect(table.size).toBe(5)
    await table.invalidate(0)
    same()
    clock.advance(200)
    expect(table.size).toBe(1) // the tombstone outlives the rows (max(ttl, loadTimeout))
    same()
    await table.clear()
    expect(table.size).toBe(0)
    same()
    await table.close()
  })

  // Two rows fill a table of two, and one of them, a, is read by `touch`; then a new id c is read
  // until it is held. What the table does then shows what the touches left behind.
  async function touchThenAdmit(touch: (table: ReturnType<typeof createTable<string, Id>>) => unknown) {
    const table = createTable<string, Id>({ capacity: 2, sweepInterval: 1e9, clock: manualClock(0) })
    await table.fetch('a', () => 'A')
    await table.fetch('b', () => 'B')
    for (let i = 0; i < 20; i++) await touch(table)
    let reads = 0
    while (!table.has('c') && reads < 10) {
      reads++
      await table.fetch('c', () => 'C')
    }
    const { evictions, full_skips, size } = table.stats()
    const held = { a: table.has('a'), b: table.has('b'), c: table.has('c') }
    await table.close()
    return { reads, held, evictions, full_skips, size }
  }

  it('peek and has leave no mark of use for eviction: a row only peeked at or checked goes as if never read', async () => {
    const untouched = await touchThenAdmit(() => {})
    expect(untouched).toEqual({ reads: 1, held: { a: false, b: true, c: true }, evictions: 1, full_skips: 0, size: 2 })
    expect(await touchThenAdmit((table) => table.peek('a'))).toEqual(untouched)
    expect(await touchThenAdmit((table) => table.has('a'))).toEqual(untouched)
    // A hit is a mark of use: the same new id is refused once before it gets in.
    const hit = await touchThenAdmit((table) => table.fetch('a', () => 'never'))
    expect(hit).toMatchObject({ reads: 2, full_skips: 1 })
  })

  it('refuses a bad id, synchronously, naming the call', () => {
    const table = createTable<string | undefined, Id>()
    expect(() => table.peek({} as never)).toThrow(TypeError)
    expect(() => table.has(Number.NaN)).toThrow(/has/)
    expect(() => table.peek('x'.repeat(16_385))).toThrow(RangeError)
    void table.close()
  })
})
