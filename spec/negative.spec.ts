import { describe, expect, it } from 'vitest'
import { createTable } from '../src/index.js'
import { manualClock } from '../src/testing.js'

describe('negative caching: undefined means absent, null is a value', () => {
  it('a second read within negativeTtl is a hit with no load; after it, a load', async () => {
    const clock = manualClock(0)
    const table = createTable<string | undefined>({ ttl: 60_000, negativeTtl: 1_000, jitter: 0, clock })
    let loads = 0
    const missing = () => (loads++, undefined)
    expect(await table.fetch('ghost', missing)).toBeUndefined()
    clock.set(999)
    expect(await table.fetch('ghost', missing)).toBeUndefined()
    expect(loads).toBe(1)
    expect(table.stats()).toMatchObject({ hits: 1, negative_hits: 1, misses: 1 })
    clock.set(1_000)
    await table.fetch('ghost', missing)
    expect(loads).toBe(2)
    await table.close()
  })

  it('defaults negativeTtl to min(ttl, 5000)', async () => {
    const clock = manualClock(0)
    const table = createTable<string | undefined>({ ttl: 60_000, jitter: 0, clock })
    let loads = 0
    await table.fetch('ghost', () => (loads++, undefined))
    clock.set(4_999)
    await table.fetch('ghost', () => (loads++, undefined))
    clock.set(5_000)
    await table.fetch('ghost', () => (loads++, undefined))
    expect(loads).toBe(2)
    await table.close()
  })

  it('negativeTtl 0 disables negative caching: every read of an absent id loads', async () => {
    const table = createTable<string | undefined>({ negativeTtl: 0, clock: manualClock() })
    let loads = 0
    await table.fetch('ghost', () => (loads++, undefined))
    await table.fetch('ghost', () => (loads++, undefined))
    expect(loads).toBe(2)
    expect(table.stats()).toMatchObject({ size: 0, negative_hits: 0 })
    await table.close()
  })

  it('put(id, undefined) writes a negative row for negativeTtl: has is true, peek undefined, a fetch is a negative hit until it expires', async () => {
    const clock = manualClock(0)
    const table = createTable<string | undefined>({ ttl: 60_000, negativeTtl: 1_000, jitter: 0, sweepInterval: 1e9, clock })
    await table.fetch('a', () => 'v') // an old row the put replaces
    expect(await table.put('a', undefined)).toMatchObject({ applied: true })
    expect(table.has('a')).toBe(true)
    expect(table.peek('a')).toBeUndefined()
    let loads = 0
    const loader = () => (loads++, 'loaded')
    clock.set(999)
    expect(await table.fetch('a', loader)).toBeUndefined()
    expect(loads).toBe(0)
    expect(table.stats()).toMatchObject({ hits: 1, negative_hits: 1 })
    clock.set(1_000) // negativeTtl, not ttl, is its lifetime
    expect(table.has('a')).toBe(false)
    expect(await table.fetch('a', loader)).toBe('loaded')
    expect(loads).toBe(1)
    await table.close()
  })

  it('null is an ordinary value, cached for the full ttl', async () => {
    const clock = manualClock(0)
    const table = createTable<string | null | undefined>({ ttl: 60_000, jitter: 0, clock })
    let loads = 0
    expect(await table.fetch('n', () => (loads++, null))).toBeNull()
    clock.set(30_000)
    expect(await table.fetch('n', () => (loads++, null))).toBeNull()
    expect(loads).toBe(1)
    expect(table.stats()).toMatchObject({ hits: 1, negative_hits: 0 })
    await table.close()
  })
})
