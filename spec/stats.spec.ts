import { describe, expect, it } from 'vitest'
import { COUNTER_NAMES, Table, createTable } from '../src/index.js'
import { manualClock } from '../src/testing.js'

describe('stats', () => {
  it('is a frozen snapshot with every counter, size, inflight and hit_rate', async () => {
    const table = createTable<string>({ clock: manualClock() })
    const empty = Table.stats(table)
    expect(Object.isFrozen(empty)).toBe(true)
    for (const name of COUNTER_NAMES) expect(empty[name]).toBe(0)
    expect(empty).toMatchObject({ size: 0, inflight: 0, hit_rate: 0 })
    await table.fetch('k', () => 'v')
    await table.fetch('k', () => 'v')
    await table.fetch('k', () => 'v')
    const after = table.stats()
    expect(after).toMatchObject({ hits: 2, misses: 1, size: 1 })
    expect(after.hit_rate).toBeCloseTo(2 / 3)
    expect(empty.hits).toBe(0) // a snapshot does not move
    await table.close()
  })
})
