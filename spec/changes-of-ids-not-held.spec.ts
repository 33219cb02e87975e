/**
 * A change about an id the table does not hold (no row, no flight, no put in progress) leaves no
 * tombstone: it uses no capacity. Young tombstones are never evicted, so before, enough of them (a
 * batch of invalidates of ids nobody read) kept every new id out of a full table for a flight's bound.
 * An id with something to fence still gets one.
 */
import { describe, expect, it } from 'vitest'
import { createTable, localBus, memoryL2 } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { latchedLoader, outcome, settle } from './support/latch.js'

describe('a change about an id the table does not hold', () => {
  it('invalidates of ids never read leave nothing: a full table still takes new ids', async () => {
    const table = createTable<string>({ name: 'n', clock: manualClock(0), jitter: 0, sweepInterval: 1e9, capacity: 100 })
    for (let i = 0; i < 100; i++) expect(await table.invalidate(`gone-${i}`)).toMatchObject({ applied: true })
    expect(table.stats()).toMatchObject({ size: 0 })
    for (let i = 0; i < 5; i++) await table.fetch(`user-${i}`, (id) => `v-${id}`)
    expect(table.stats()).toMatchObject({ size: 5, fills: 5, full_skips: 0 })
    expect(table.peek('user-0')).toBe('v-user-0')
    await table.close()
  })

  it('puts that store nothing (a lifetime of 0, a value over maxSize, undefined with negativeTtl 0) leave nothing either', async () => {
    const table = createTable<string | undefined>({ name: 'n', clock: manualClock(0), jitter: 0, sweepInterval: 1e9, maxSize: 10, sizeOf: (v) => (v ?? '').length, negativeTtl: 0 })
    await table.put('zero', 'v', { ttl: 0 })
    await table.put('heavy', 'x'.repeat(11))
    await table.put('absent', undefined)
    expect(table.stats()).toMatchObject({ size: 0, weight: 0, heavy_skips: 1 })
    await table.close()
  })

  it('an invalidate of an id whose flight runs still leaves a tombstone, so the next read takes no older entry', async () => {
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
})
