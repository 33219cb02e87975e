/**
 * Capacity counts rows: a namespace's rows count against the table's one capacity, and on a table
 * bounded by count alone a new value for an id that holds only a tombstone takes the tombstone's
 * place, with no admission test and no row evicted.
 */
import { describe, expect, it } from 'vitest'
import { type Id, createTable } from '../src/index.js'
import { manualClock } from '../src/testing.js'

describe('capacity', () => {
  it("is shared by the base table and its namespaces: a namespace's new id on a full table goes through admission", async () => {
    const table = createTable<string, Id>({ capacity: 2, ttl: 60_000, jitter: 0, sweepInterval: 1e9, clock: manualClock(0) })
    const acme = table.namespace('acme')
    const other = table.namespace('other')
    // Each read three times once the table is half full, so admission weighs them above a newcomer.
    for (let i = 0; i < 3; i++) {
      await table.fetch('a', () => 'base a', { forceRefresh: i > 0 })
      await acme.fetch('a', () => 'acme a', { forceRefresh: i > 0 })
    }
    expect(table.stats()).toMatchObject({ size: 2 })
    expect(await other.fetch('x', () => 'other x')).toBe('other x')
    expect(table.stats()).toMatchObject({ size: 2, full_skips: 1, evictions: 0 })
    expect(other.has('x')).toBe(false)
    expect([table.peek('a'), acme.peek('a')]).toEqual(['base a', 'acme a'])
    await table.close()
  })

  it("bounded by count alone: a new value for an id that holds only a tombstone takes the tombstone's place", async () => {
    const clock = manualClock(0)
    const table = createTable<string, Id>({ capacity: 3, ttl: 60_000, jitter: 0, sweepInterval: 1e9, clock })
    for (let i = 0; i < 3; i++) for (const id of ['a', 'b']) await table.fetch(id, () => id.toUpperCase(), { forceRefresh: i > 0 })
    await table.fetch('n', () => 'n v1')
    await table.invalidate('n') // 'n' holds a tombstone, which counts as a row
    expect(table.stats().size).toBe(3)
    expect(await table.fetch('n', () => 'n v2')).toBe('n v2')
    expect(table.peek('n')).toBe('n v2')
    expect(table.stats()).toMatchObject({ size: 3, full_skips: 0, evictions: 0 })
    expect([table.has('a'), table.has('b')]).toEqual([true, true])
    await table.close()
  })
})
