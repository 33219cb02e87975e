/**
 * The long-lived collections that change on every miss are made anew now and then (see
 * `core/young-collections.ts`: a table V8 has moved to the old generation would keep what its
 * leftovers held alive through every scavenge). Made anew, they keep every entry: the flights
 * registry across its renewals (joins, fences), and the write-backs in progress, which a clear waits for.
 */
import { describe, expect, it } from 'vitest'
import { RENEW_EVERY } from '../src/core/young-collections.js'
import { createTable, memoryL2 } from '../src/index.js'
import type { L2Store } from '../src/store.js'
import { manualClock } from '../src/testing.js'
import { latchedLoader, outcome, settle } from './support/latch.js'

/** More flights than two renewals of the registry. */
const MANY = 2 * RENEW_EVERY + 100

describe('the collections made anew', () => {
  it('the flights registry: every flight started across its renewals is joined, answered and counted once', async () => {
    const table = createTable<string>({ clock: manualClock(0), capacity: 2 * MANY })
    const origin = latchedLoader<string>()
    const first = Array.from({ length: MANY }, (_, i) => table.fetch(`id-${i}`, origin.loader))
    await settle()
    expect(origin.calls).toHaveLength(MANY)
    const joined = Array.from({ length: MANY }, (_, i) => table.fetch(`id-${i}`, origin.loader)) // after every renewal
    await settle()
    expect(origin.calls, 'every read made after the renewals joined its flight').toHaveLength(MANY)
    for (const call of origin.calls) call.resolve(`value of ${String(call.id)}`)
    const expected = Array.from({ length: MANY }, (_, i) => `value of id-${i}`)
    expect(await Promise.all(first)).toEqual(expected)
    expect(await Promise.all(joined)).toEqual(expected)
    expect(table.stats()).toMatchObject({ flights: MANY, loads: MANY, coalesced: MANY, fills: MANY, inflight: 0 })
    await table.close()
  })

  it('the flights registry: a change fences a flight started before a renewal', async () => {
    const table = createTable<string>({ clock: manualClock(0), capacity: 2 * MANY })
    const origin = latchedLoader<string>()
    const first = table.fetch('first', origin.loader)
    const rest = Array.from({ length: MANY }, (_, i) => table.fetch(`id-${i}`, origin.loader))
    await settle()
    await table.invalidate('first')
    const after = table.fetch('first', origin.loader) // the fenced flight is no longer joinable: a new one starts
    await settle()
    expect(origin.calls.filter((call) => call.id === 'first')).toHaveLength(2)
    for (const call of origin.calls) call.resolve(call === origin.calls.at(-1) ? 'after the change' : 'loaded')
    expect(await first).toBe('loaded')
    expect(await after).toBe('after the change')
    await Promise.all(rest)
    await table.close()
  })

  it('the write-backs in progress: a clear waits for every one, across the renewals of their set', async () => {
    const clock = manualClock(0)
    const store = memoryL2({ clock })
    const held: (() => void)[] = []
    const slowWrites: L2Store = {
      ...store,
      get: (t, i) => store.get(t, i),
      set: (t, i, entry) => new Promise((resolve, reject) => held.push(() => void store.set(t, i, entry).then(resolve, reject))),
      nextVersion: (t, i, floor) => store.nextVersion(t, i, floor),
      clear: (t) => store.clear(t),
      tagVersions: (t, tags) => store.tagVersions!(t, tags),
      invalidateTags: (t, tags, floor) => store.invalidateTags!(t, tags, floor),
      close: () => store.close(),
    }
    const table = createTable<string>({ clock, capacity: 2 * MANY, l2: slowWrites })
    const reads = Array.from({ length: MANY }, (_, i) => table.fetch(`id-${i}`, async () => 'loaded'))
    await settle()
    expect(held).toHaveLength(MANY) // every write-back waits for its answer (and its read with it: L2 answered that read)
    const cleared = outcome(table.clear())
    await settle()
    held.splice(1).forEach((answer) => answer()) // all but the first, added before the set's renewals
    await settle()
    expect(cleared.state, 'the first write-back is still in progress').toBe('pending')
    held.splice(0).forEach((answer) => answer())
    await settle()
    await settle()
    expect(cleared.state).toBe('fulfilled')
    expect(await Promise.all(reads)).toEqual(Array.from({ length: MANY }, () => 'loaded'))
    await table.close()
  })
})
