/**
 * A forced refresh replaces the row in its own process and in L2, at the version of the entry it
 * replaces, and sends nothing on the bus: another process that holds the row keeps answering it
 * until it expires or a change of the id reaches it (an `invalidate` after the refresh reaches every
 * process). Where another process's put has landed in L2 but not yet in that process's L1, a forced
 * refresh that reads the put's entry writes its loader's answer over it at the put's version, and
 * the putter's L1 keeps the put's value until its row expires.
 */
import { describe, expect, it } from 'vitest'
import { createTable, localBus, memoryL2 } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { heldWrites } from './support/held-l2.js'
import { outcome, settle } from './support/latch.js'

const NAME = 'refreshed'
const TTL = 60_000

function world() {
  const clock = manualClock(0)
  const store = memoryL2({ clock })
  const bus = localBus()
  const options = { name: NAME, ttl: TTL, jitter: 0, sweepInterval: 1e9, clock, l2: store, bus }
  return { clock, store, bus, options }
}

describe('a forced refresh', () => {
  it('sends nothing on the bus: another process keeps answering its row until it expires', async () => {
    const { clock, store, bus, options } = world()
    const [refresher, other] = [createTable<string>(options), createTable<string>(options)]
    expect(await refresher.fetch('a', () => 'old')).toBe('old')
    expect(await other.fetch('a', () => 'never')).toBe('old') // from L2
    const entry = await store.get(NAME, 'a')
    const published: unknown[] = []
    bus.subscribe((message) => published.push(message))
    expect(await refresher.fetch('a', () => 'new', { forceRefresh: true })).toBe('new')
    await settle()
    expect(published).toEqual([])
    expect(other.stats()).toMatchObject({ coh_applied: 0, coh_stale: 0 })
    // Its own process and L2 hold the new value, at the version of the entry it replaced.
    expect(refresher.peek('a')).toBe('new')
    expect(await store.get(NAME, 'a')).toMatchObject({ value: 'new', version: entry!.version })
    // The other process holds its row until it expires.
    clock.set(TTL - 1)
    expect(await other.fetch('a', () => 'never')).toBe('old')
    clock.set(TTL)
    expect(await other.fetch('a', () => 'loaded after expiry')).not.toBe('old')
    await refresher.invalidate('a') // a change is published where the refresh was not
    expect(published).toHaveLength(1)
    await Promise.all([refresher.close(), other.close(), bus.close()])
  })

  it('an invalidate after the refresh reaches every process', async () => {
    const { bus, options } = world()
    const [refresher, other] = [createTable<string>(options), createTable<string>(options)]
    await refresher.fetch('a', () => 'old')
    await other.fetch('a', () => 'never')
    await refresher.fetch('a', () => 'new', { forceRefresh: true })
    expect(other.peek('a')).toBe('old')
    await refresher.invalidate('a')
    await settle()
    expect(other.has('a')).toBe(false)
    expect(await other.fetch('a', () => 'reloaded')).toBe('reloaded')
    await Promise.all([refresher.close(), other.close(), bus.close()])
  })

  it("that reads another process's put entry not yet in the putter's L1 writes its answer over it at the put's version; the putter's L1 keeps the put", async () => {
    const clock = manualClock(0)
    const store = memoryL2({ clock })
    const held = heldWrites(store)
    const options = { name: NAME, ttl: TTL, jitter: 0, sweepInterval: 1e9, clock }
    const putter = createTable<string>({ ...options, l2: held.held })
    const refresher = createTable<string>({ ...options, l2: store })
    const put = outcome(putter.put('a', 'put'))
    await settle() // the put's entry is in L2; its write's answer is held, so the putter's L1 has not taken it
    const putEntry = await store.get(NAME, 'a')
    expect(putEntry).toMatchObject({ value: 'put' })
    expect(putter.peek('a')).toBeUndefined()
    expect(await refresher.fetch('a', () => 'loaded', { forceRefresh: true })).toBe('loaded')
    await settle()
    expect(await store.get(NAME, 'a')).toMatchObject({ value: 'loaded', version: putEntry!.version })
    held.release()
    await settle()
    expect(put.value).toMatchObject({ applied: true })
    expect(putter.peek('a')).toBe('put')
    clock.set(TTL - 1)
    expect(await putter.fetch('a', () => 'never')).toBe('put')
    clock.set(TTL)
    expect(await putter.fetch('a', () => 'after expiry')).not.toBe('put')
    await Promise.all([putter.close(), refresher.close()])
  })
})
