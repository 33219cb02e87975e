/**
 * A forced refresh and a put of the same id in this process, at once: the put's value is what every
 * layer holds once both have settled. The refresh's caller gets its loader's answer, but its
 * write-back never lands on the put's entry at the put's own version (an equal version is written
 * over, so L2 would hold the loader's value while L1 held the put's, for every other process to read).
 * A load whose loader reports a newer version than the put's is written back to L2 all the same.
 */
import { describe, expect, it } from 'vitest'
import { type Id, createTable, memoryL2 } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { heldWrites } from './support/held-l2.js'
import { latchedBatchLoader, latchedLoader, outcome, settle } from './support/latch.js'

const NAME = 'refresh-put'

/** A table on an L2 whose write answers are held until `l2.release()` (a write reaches the store at once): a put made now stays in progress. */
async function world() {
  const clock = manualClock(0)
  const store = memoryL2({ clock })
  const l2 = heldWrites(store)
  const table = createTable<string>({ name: NAME, jitter: 0, sweepInterval: 1e9, clock, l2: l2.held })
  return { clock, store, l2, table }
}

describe('a forced refresh meeting a put in progress', () => {
  it('that reads the put entry from L2 does not write its loader answer over it', async () => {
    const { store, l2, table } = await world()
    const put = outcome(table.put('a', 'put'))
    await settle() // the put's version is minted and its entry is in L2; its answer is held
    expect((await store.get(NAME, 'a'))?.value).toBe('put')
    const origin = latchedLoader<string>()
    const refreshed = outcome(table.fetch('a', origin.loader, { forceRefresh: true }))
    await settle()
    origin.only().resolve('loaded')
    await settle()
    expect(refreshed.value).toBe('loaded')
    l2.release()
    await settle()
    expect(put.value).toMatchObject({ applied: true, l2: 'written' })
    expect((await store.get(NAME, 'a'))?.value).toBe('put')
    expect(table.peek('a')).toBe('put')
    expect(await table.fetch('a', () => 'never')).toBe('put')
    await table.close()
  })

  it('whose answer arrives after the put was applied: neither layer takes it', async () => {
    const { store, l2, table } = await world()
    const put = outcome(table.put('a', 'put'))
    await settle()
    const origin = latchedLoader<string>()
    const refreshed = outcome(table.fetch('a', origin.loader, { forceRefresh: true }))
    await settle()
    l2.release()
    await settle()
    expect(put.value).toMatchObject({ applied: true })
    origin.only().resolve('loaded')
    await settle()
    expect(refreshed.value).toBe('loaded')
    expect((await store.get(NAME, 'a'))?.value).toBe('put')
    expect(table.peek('a')).toBe('put')
    expect(table.stats().fenced).toBe(1)
    await table.close()
  })

  it('through a batch loader: does not write its answer over the put entry either', async () => {
    const clock = manualClock(0)
    const store = memoryL2({ clock })
    const l2 = heldWrites(store)
    const origin = latchedBatchLoader<string>()
    const table = createTable<string, Id>({ name: NAME, jitter: 0, sweepInterval: 1e9, clock, l2: l2.held })
    const put = outcome(table.put('a', 'put'))
    await settle()
    const refreshed = outcome(table.fetchMany(['a'], origin.loader, { forceRefresh: true }))
    await settle()
    origin.only().resolve(['loaded'])
    await settle()
    expect(refreshed.value).toEqual(['loaded'])
    l2.release()
    await settle()
    expect(put.value).toMatchObject({ applied: true })
    expect((await store.get(NAME, 'a'))?.value).toBe('put')
    expect(table.peek('a')).toBe('put')
    await table.close()
  })

  it('made once the put settled: replaces the put in both layers', async () => {
    const { store, l2, table } = await world()
    const put = table.put('a', 'put')
    await settle()
    l2.release()
    expect(await put).toMatchObject({ applied: true })
    expect(await table.fetch('a', () => 'loaded', { forceRefresh: true })).toBe('loaded')
    await settle()
    expect((await store.get(NAME, 'a'))?.value).toBe('loaded')
    expect(table.peek('a')).toBe('loaded')
    await table.close()
  })

  it('of another id, begun before the put: its write-back, made while the put is in progress, stands', async () => {
    const { store, l2, table } = await world()
    const origin = latchedLoader<string>()
    const refreshed = outcome(table.fetch('a', origin.loader, { forceRefresh: true }))
    await settle()
    const put = outcome(table.put('b', 'other id'))
    await settle()
    origin.only().resolve('loaded')
    await settle()
    expect(put.state).toBe('pending')
    expect(refreshed.value).toBe('loaded')
    expect((await store.get(NAME, 'a'))?.value).toBe('loaded')
    expect(table.peek('a')).toBe('loaded')
    l2.release()
    await settle()
    expect(put.value).toMatchObject({ applied: true })
    await table.close()
  })
})

describe('a load meeting a put in progress', () => {
  it('whose loader reports a newer version than the put: its write-back, made while the put is in progress, reaches L2', async () => {
    const { store, l2, table } = await world()
    const origin = latchedLoader<string>()
    const read = outcome(table.fetch('a', origin.loader))
    await settle()
    const put = outcome(table.put('a', 'put@50', { version: 50 }))
    await settle() // the put's entry is in L2, its answer held
    const call = origin.only()
    call.context.setVersion(100)
    call.resolve('loaded@100')
    await settle()
    l2.release()
    await settle()
    expect(read.value).toBe('loaded@100')
    expect(put.value).toMatchObject({ version: 50, l2: 'written' })
    expect(await store.get(NAME, 'a')).toMatchObject({ value: 'loaded@100', version: 100 })
    await table.close()
  })
})
