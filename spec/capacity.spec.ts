import { describe, expect, it } from 'vitest'
import { createTable, manualClock } from '../src/index.js'

describe('capacity', () => {
  it('a fill for a new id on a full table is not stored (full_skips), but its waiters get the value', async () => {
    const table = createTable<string>({ capacity: 2, clock: manualClock() })
    await table.fetch('a', () => 'A')
    await table.fetch('b', () => 'B')
    const [c1, c2] = await Promise.all([table.fetch('c', () => 'C'), table.fetch('c', () => 'C2')])
    expect([c1, c2]).toEqual(['C', 'C'])
    expect(table.stats()).toMatchObject({ size: 2, full_skips: 1, fills: 2 })
    let loads = 0
    await table.fetch('c', () => (loads++, 'C'))
    expect(loads).toBe(1) // it was not stored
    await table.close()
  })

  it('replacing an id’s row never counts as full', async () => {
    const clock = manualClock(0)
    const table = createTable<string>({ capacity: 1, ttl: 100, jitter: 0, sweepInterval: 1e9, clock })
    await table.fetch('a', () => 'v1')
    clock.set(200) // expired, not swept: still held
    expect(await table.fetch('a', () => 'v2')).toBe('v2')
    await table.put('a', 'v3')
    expect(await table.fetch('a', () => 'never')).toBe('v3')
    expect(table.stats()).toMatchObject({ size: 1, full_skips: 0 })
    await table.close()
  })

  it('a put for a new id on a full table is skipped too', async () => {
    const table = createTable<string>({ capacity: 1, clock: manualClock() })
    await table.put('a', 'A')
    await table.put('b', 'B')
    expect(table.stats()).toMatchObject({ size: 1, full_skips: 1 })
    await table.close()
  })
})
