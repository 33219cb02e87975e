import { describe, expect, it } from 'vitest'
import { createTable, memoryL2 } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { latchedLoader, settle } from './support/latch.js'

/** Two tables (two "processes") sharing one memory L2, on one manual clock. */
function pair(options: { ttl?: number; jitter?: number; negativeTtl?: number } = {}) {
  const clock = manualClock(0)
  const l2 = memoryL2({ clock })
  const make = () => createTable<string | undefined>({ name: 'catalog', ttl: 1_000, jitter: 0, sweepInterval: 1e9, clock, l2, ...options })
  return { clock, l2, a: make(), b: make() }
}

describe('the flight checks L2 before the loader', () => {
  it('an L2 hit answers with no loader call, counts l2_hits, and the row keeps the entry’s remaining lifetime', async () => {
    const { clock, a, b } = pair()
    expect(await a.fetch('sku', () => 'from origin')).toBe('from origin')
    clock.set(600)
    let loads = 0
    expect(await b.fetch('sku', () => (loads++, 'again'))).toBe('from origin')
    expect(loads).toBe(0)
    expect(b.stats()).toMatchObject({ l2_hits: 1, loads: 0, fills: 1, misses: 1 })
    clock.set(999)
    expect(await b.fetch('sku', () => (loads++, 'again'))).toBe('from origin')
    clock.set(1_000) // never a fresh full TTL: the value dies one TTL after its load, in B too
    expect(await b.fetch('sku', () => (loads++, 'fresh'))).toBe('fresh')
    expect(loads).toBe(1)
    await Promise.all([a.close(), b.close()])
  })

  it('the loader’s answer is written to L2 with the same jittered expiry as the row', async () => {
    const clock = manualClock(0)
    const l2 = memoryL2({ clock })
    const table = createTable<string | undefined>({ name: 't', ttl: 1_000, jitter: 0.2, random: () => 0.9999, clock, l2 }) // the latest expiry: 1000 + 200
    await table.fetch('k', () => 'v')
    const entry = await l2.get('t', 'k')
    expect(entry).toMatchObject({ kind: 'value', value: 'v', ttl: 1_200 })
    clock.set(1_199)
    expect(await table.fetch('k', () => 'reloaded')).toBe('v')
    clock.set(1_200)
    expect(await table.fetch('k', () => 'reloaded')).toBe('reloaded')
    await table.close()
  })

  it('a negative answer goes to L2 as absent, with negativeTtl, and answers the other table as undefined', async () => {
    const { clock, l2, a, b } = pair({ negativeTtl: 300 })
    expect(await a.fetch('ghost', () => undefined)).toBeUndefined()
    expect(await l2.get('catalog', 'ghost')).toMatchObject({ kind: 'absent', ttl: 300 })
    let loads = 0
    expect(await b.fetch('ghost', () => (loads++, 'x'))).toBeUndefined()
    expect(loads).toBe(0)
    expect(b.stats()).toMatchObject({ l2_hits: 1, negative_hits: 0 })
    expect(await b.fetch('ghost', () => (loads++, 'x'))).toBeUndefined()
    expect(b.stats().negative_hits).toBe(1)
    clock.set(300)
    expect(await b.fetch('ghost', () => (loads++, 'x'))).toBe('x')
    await Promise.all([a.close(), b.close()])
  })

  it('a herd on table A costs one load; the same herd on table B costs no load, one l2_hit and 199 coalesced', async () => {
    const { a, b } = pair()
    const origin = latchedLoader<string>()
    const herdA = Array.from({ length: 200 }, () => a.fetch('hot', origin.loader))
    await settle()
    origin.only().resolve('value')
    await Promise.all(herdA)
    const herdB = await Promise.all(Array.from({ length: 200 }, () => b.fetch('hot', origin.loader)))
    expect(new Set(herdB)).toEqual(new Set(['value']))
    expect(origin.calls).toHaveLength(1)
    expect(b.stats()).toMatchObject({ loads: 0, l2_hits: 1, coalesced: 199, flights: 1 })
    await Promise.all([a.close(), b.close()])
  })

  it('put and invalidate act on both layers', async () => {
    const { l2, a, b } = pair()
    const put = await a.put('sku', 'written')
    expect(put.applied).toBe(true)
    expect(await l2.get('catalog', 'sku')).toMatchObject({ kind: 'value', value: 'written', version: put.version })
    expect(await b.fetch('sku', () => 'origin')).toBe('written')
    const gone = await a.invalidate('sku')
    expect(gone.version).toBeGreaterThan(put.version)
    expect(await l2.get('catalog', 'sku')).toMatchObject({ kind: 'tombstone', version: gone.version })
    expect(await a.fetch('sku', () => 'reloaded')).toBe('reloaded')
    await Promise.all([a.close(), b.close()])
  })

  it('a tombstone in L2 reads as a miss: the loader runs and the new row takes the tombstone’s version', async () => {
    const { l2, a, b } = pair()
    await a.fetch('sku', () => 'v1')
    const { version } = await a.invalidate('sku')
    let loads = 0
    expect(await b.fetch('sku', () => (loads++, 'v2'))).toBe('v2')
    expect(loads).toBe(1)
    expect(await l2.get('catalog', 'sku')).toMatchObject({ kind: 'value', value: 'v2', version })
    await Promise.all([a.close(), b.close()])
  })
})
