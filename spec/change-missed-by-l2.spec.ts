/**
 * A change (put, invalidate) whose L2 write failed stands in this process for as long as L2 may
 * still hold an older entry of its id: the version is kept past its row or tombstone (swept, evicted,
 * or never stored on a full table), until every entry written with the table's lifetimes (its jitter
 * and grace included), with a longer one this table wrote (its row may be gone), or with the replaced
 * row's own longer one, is gone. Then it is forgotten; a clear forgets it only when L2 moved to a new
 * generation with it (a clear whose L2 failed, here or heard on the bus, does not).
 */
import { describe, expect, it } from 'vitest'
import { createTable, localBus, memoryL2 } from '../src/index.js'
import type { L2Store } from '../src/store.js'
import { chaosL2, manualClock } from '../src/testing.js'
import { advanceSettled, settle } from './support/latch.js'

const NAME = 'catalog'

/** A table on an L2 whose next `set` fails, with a sweeper tick every 100 ms; `store` is the L2 itself, shared with other processes. */
function world(options: { ttl?: number; jitter?: number; grace?: number; capacity?: number; random?: () => number } = {}) {
  const clock = manualClock(0)
  const store = memoryL2({ clock })
  const l2 = chaosL2(store, clock)
  const table = createTable<string>({ name: NAME, ttl: 1_000, jitter: 0, loadTimeout: 500, sweepInterval: 100, clock, l2, ...options })
  return { clock, store, l2, table, failNextWrite: () => l2.fail('set', { kind: 'throw' }, { times: 1 }) }
}

describe('a change whose L2 write failed', () => {
  it('an invalidate: once its tombstone is swept, the older entry L2 still holds (the top of its jitter band) is not read back', async () => {
    const { clock, table, failNextWrite } = world({ jitter: 0.5, random: () => 0.999 }) // the entry lives 1,499 ms
    expect(await table.fetch('k', () => 'old')).toBe('old')
    await advanceSettled(clock, 10)
    failNextWrite()
    expect(await table.invalidate('k')).toMatchObject({ applied: true, l2: 'failed' })
    await advanceSettled(clock, 1_200) // t = 1,210: the tombstone (1,000 ms) is swept; L2's entry lives to 1,499
    expect(table.has('k')).toBe(false)
    let loads = 0
    expect(await table.fetch('k', () => (loads++, 'new'))).toBe('new')
    expect({ loads, l2_hits: table.stats().l2_hits }).toEqual({ loads: 1, l2_hits: 0 })
    await table.close()
  })

  it("an invalidate: the fail-safe never answers the older entry from L2's grace", async () => {
    const { clock, table, failNextWrite } = world({ grace: 10_000 })
    expect(await table.fetch('k', () => 'old')).toBe('old')
    await advanceSettled(clock, 10)
    failNextWrite()
    expect(await table.invalidate('k')).toMatchObject({ applied: true, l2: 'failed' })
    await advanceSettled(clock, 2_000) // the tombstone is swept; L2 keeps the entry 10 s past its expiry
    expect(table.stats().swept).toBeGreaterThan(0)
    await expect(table.fetch('k', () => Promise.reject(new Error('origin down')))).rejects.toThrow('origin down')
    await table.close()
  })

  it('a put with a short ttl: once its row is swept, the older entry L2 still holds is not read back', async () => {
    const { clock, table, failNextWrite } = world()
    expect(await table.fetch('k', () => 'old')).toBe('old')
    await advanceSettled(clock, 10)
    failNextWrite()
    expect(await table.put('k', 'new', { ttl: 100 })).toMatchObject({ applied: true, l2: 'failed' })
    await advanceSettled(clock, 400) // the put's row expired at 110 and was swept; L2's 'old' lives to 1,000
    expect(table.has('k')).toBe(false)
    expect(await table.fetch('k', () => 'reloaded')).toBe('reloaded')
    await table.close()
  })

  it('an invalidate on a full table, of an id it does not hold (no tombstone stored): the next read loads', async () => {
    const { table, store, failNextWrite, clock } = world({ capacity: 1 })
    const other = createTable<string>({ name: NAME, clock, l2: store }) // another process on the same L2
    expect(await other.fetch('k', () => 'old')).toBe('old')
    expect(await table.fetch('x', () => 'x')).toBe('x') // full
    failNextWrite()
    expect(await table.invalidate('k')).toMatchObject({ applied: true, l2: 'failed' })
    expect(table.has('k')).toBe(false)
    expect(await table.fetch('k', () => 'new')).toBe('new')
    await Promise.all([table.close(), other.close()])
  })

  it("outlives a row the change replaced whose own lifetime is longer than the table's (a loader's setTtl)", async () => {
    const { clock, table, failNextWrite } = world()
    expect(await table.fetch('k', (_id, context) => (context.setTtl(5_000), 'old'))).toBe('old') // L2 keeps it to 5,000
    failNextWrite()
    expect(await table.invalidate('k')).toMatchObject({ applied: true, l2: 'failed' })
    await advanceSettled(clock, 3_000) // past the table's own entry life (1,000): the replaced row's governs
    expect(await table.fetch('k', () => 'new')).toBe('new')
    await table.close()
  })

  it('outlives an entry this table wrote with a longer lifetime than its own, after that row was evicted', async () => {
    const { clock, table, failNextWrite } = world({ capacity: 1 })
    expect(await table.fetch('k', (_id, context) => (context.setTtl(10_000), 'old'))).toBe('old') // L2 keeps it to 10,000
    for (let i = 0; i < 4 && !table.has('x'); i++) await table.fetch('x', () => 'x') // admitted at last, in place of k
    expect(table.has('k')).toBe(false)
    failNextWrite()
    expect(await table.invalidate('k')).toMatchObject({ applied: true, l2: 'failed' })
    await advanceSettled(clock, 5_000) // past the table's own entry life (1,000)
    expect(await table.fetch('k', () => 'new')).toBe('new')
    await table.close()
  })

  it('is forgotten once the older entries are gone: an entry L2 gets afterwards at a lower version answers again', async () => {
    const { clock, store, table, failNextWrite } = world()
    expect(await table.fetch('k', () => 'old')).toBe('old')
    failNextWrite()
    const { version } = await table.invalidate('k')
    await advanceSettled(clock, 1_500) // past every older entry's life (1,000), and a sweeper tick
    const other = createTable<string>({ name: NAME, clock, l2: store })
    expect(await other.put('k', 'older, given', { version: version - 1 })).toMatchObject({ l2: 'written' })
    expect(await table.fetch('k', () => 'loaded')).toBe('older, given') // an L2 hit: nothing kept refuses it
    await Promise.all([table.close(), other.close()])
  })

  it('is forgotten by a clear', async () => {
    const { store, table, failNextWrite, clock } = world()
    expect(await table.fetch('k', () => 'old')).toBe('old')
    failNextWrite()
    const { version } = await table.invalidate('k')
    await table.clear()
    const other = createTable<string>({ name: NAME, clock, l2: store })
    expect(await other.put('k', 'after the clear', { version: version - 1 })).toMatchObject({ l2: 'written' })
    expect(await table.fetch('k', () => 'loaded')).toBe('after the clear')
    await Promise.all([table.close(), other.close()])
  })

  it('stands through a clear whose own L2 clear failed: the entry the put replaced is not read back', async () => {
    const { l2, table, failNextWrite } = world({ ttl: 60_000 })
    expect(await table.fetch('k', () => 'old')).toBe('old')
    failNextWrite()
    expect(await table.put('k', 'new')).toMatchObject({ applied: true, l2: 'failed' })
    l2.fail('clear', { kind: 'throw' }, { times: 1 })
    expect(await table.clear()).toMatchObject({ l2: 'failed' })
    expect(await table.fetch('k', () => 'reloaded')).toBe('reloaded')
    await table.close()
  })

  it('stands through a clear heard from another process whose L2 clear failed', async () => {
    const clock = manualClock(0)
    const store = memoryL2({ clock })
    const bus = localBus()
    const [l2a, l2b] = [chaosL2(store, clock), chaosL2(store, clock)]
    const options = { name: NAME, ttl: 60_000, jitter: 0, sweepInterval: 1e9, clock, bus }
    const [a, b] = [createTable<string>({ ...options, l2: l2a }), createTable<string>({ ...options, l2: l2b })]
    expect(await a.fetch('k', () => 'old')).toBe('old')
    l2a.fail('set', { kind: 'throw' }, { times: 1 })
    expect(await a.put('k', 'new')).toMatchObject({ applied: true, l2: 'failed' })
    l2b.fail('clear', { kind: 'throw' }, { times: 1 })
    expect(await b.clear()).toEqual({ l2: 'failed', broadcast: true })
    await settle()
    expect(a.stats().clears).toBe(1)
    expect(await a.fetch('k', () => 'reloaded')).toBe('reloaded')
    await Promise.all([a.close(), b.close()])
  })

  it('is forgotten by a clear heard from another process whose L2 cleared, in the same key space', async () => {
    const clock = manualClock(0)
    const store = memoryL2({ clock })
    const inSpace = (l2: L2Store): L2Store => Object.assign(Object.create(l2) as L2Store, { keySpace: 'shop:' })
    const bus = localBus()
    const l2a = chaosL2(store, clock)
    const options = { name: NAME, ttl: 60_000, jitter: 0, sweepInterval: 1e9, clock, bus }
    const [a, b] = [createTable<string>({ ...options, l2: inSpace(l2a) }), createTable<string>({ ...options, l2: inSpace(store) })]
    expect(await a.fetch('k', () => 'old')).toBe('old')
    l2a.fail('set', { kind: 'throw' }, { times: 1 })
    const { version } = await a.put('k', 'new')
    expect(await b.clear()).toEqual({ l2: 'cleared', broadcast: true })
    await settle()
    expect(await b.put('k', 'after the clear', { version: version - 1 })).toMatchObject({ l2: 'written' })
    expect(await a.fetch('k', () => 'loaded')).toBe('after the clear')
    await Promise.all([a.close(), b.close()])
  })
})
