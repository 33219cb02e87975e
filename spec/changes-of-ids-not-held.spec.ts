/**
 * A local change about an id the table does not hold (no row, no flight, no put in progress) still
 * leaves a tombstone that remembers its version, but one that fences nothing: it is never young, and
 * goes through eviction as a row does. Before, young tombstones of a batch of invalidates of ids
 * nobody read kept every new id out of a full table for a flight's bound. A tombstone of an id with
 * something to fence stays young.
 */
import { describe, expect, it } from 'vitest'
import { createTable, localBus, memoryL2 } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { latchedLoader, outcome, settle } from './support/latch.js'

describe('a local change about an id the table does not hold', () => {
  it('invalidates of ids never read leave tombstones that new ids displace: a full table still takes new ids', async () => {
    const table = createTable<string>({ name: 'n', clock: manualClock(0), jitter: 0, sweepInterval: 1e9, capacity: 100 })
    for (let i = 0; i < 100; i++) expect(await table.invalidate(`gone-${i}`, { version: 5 })).toMatchObject({ applied: true })
    expect(table.stats()).toMatchObject({ size: 100 }) // each remembers its version (an older change of the id is refused)
    for (let i = 0; i < 5; i++) await table.fetch(`user-${i}`, (id) => `v-${id}`)
    expect(table.stats()).toMatchObject({ size: 100, fills: 5, evictions: 5, full_skips: 0 })
    expect(table.peek('user-0')).toBe('v-user-0')
    await table.close()
  })

  it('puts that store nothing (a lifetime of 0, a value over maxSize, undefined with negativeTtl 0) leave tombstones new ids displace too', async () => {
    const table = createTable<string | undefined>({ name: 'n', clock: manualClock(0), jitter: 0, sweepInterval: 1e9, capacity: 3, negativeTtl: 0, maxSize: 10, sizeOf: (v) => (v ?? '').length })
    await table.put('zero', 'v', { ttl: 0 })
    await table.put('heavy', 'x'.repeat(11))
    await table.put('absent', undefined)
    expect(table.stats()).toMatchObject({ size: 3, weight: 0, heavy_skips: 1 })
    await table.fetch('new', () => 'n')
    expect(table.peek('new')).toBe('n')
    expect(table.stats()).toMatchObject({ size: 3, evictions: 1, full_skips: 0 })
    await table.close()
  })

  it('heard while a flight of the id runs, a change leaves a tombstone that stays young, so the next read takes no older entry', async () => {
    const clock = manualClock(0)
    const l2 = memoryL2({ clock })
    const bus = localBus()
    const options = { name: 'n', clock, jitter: 0, sweepInterval: 1e9, l2, bus }
    const here = createTable<string>(options)
    const there = createTable<string>(options)
    const origin = latchedLoader<string>()
    const loading = outcome(here.fetch('k', origin.loader))
    await settle()
    expect(origin.calls).toHaveLength(1)
    await there.invalidate('k') // heard here over the bus while the flight runs; no row here yet
    await settle()
    expect(here.stats()).toMatchObject({ size: 1, coh_applied: 1 }) // the tombstone
    origin.only().resolve('loaded before the change')
    await settle()
    expect(loading).toMatchObject({ state: 'fulfilled', value: 'loaded before the change' })
    expect(here.stats()).toMatchObject({ fenced: 1, fills: 0 })
    expect(await here.fetch('k', () => 'after the change')).toBe('after the change')
    await Promise.all([here.close(), there.close()])
  })

  it('a local tombstone of an id whose flight runs stays young: the hands pass over it and take the one that fences nothing', async () => {
    const table = createTable<string>({ name: 'n', clock: manualClock(0), jitter: 0, sweepInterval: 1e9, capacity: 2 })
    const origin = latchedLoader<string>()
    const loading = outcome(table.fetch('k', origin.loader))
    await settle()
    await table.invalidate('k', { version: 5 }) // its flight runs: the tombstone may still fence it
    await table.invalidate('gone', { version: 5 }) // nothing to fence
    expect(table.stats().size).toBe(2)
    await table.fetch('new', () => 'n')
    expect(table.peek('new')).toBe('n')
    expect(table.stats()).toMatchObject({ size: 2, evictions: 1, full_skips: 0 })
    expect(await table.put('k', 'older', { version: 4 })).toMatchObject({ applied: false }) // k's tombstone is still there
    origin.only().resolve('loaded before the change')
    await settle()
    expect(loading).toMatchObject({ state: 'fulfilled', value: 'loaded before the change' })
    await table.close()
  })
})
