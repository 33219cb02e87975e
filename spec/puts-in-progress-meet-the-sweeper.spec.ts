/**
 * A put still waiting on L2 while the sweeper runs: what it depends on outlives it. A tag version
 * its row's birth is judged against is not forgotten while it is in progress (and a tag invalidated
 * meanwhile keeps its row out of L1); a newer local change refuses it by its own record, not by a
 * tombstone the sweeper may take first, and that change's tombstone outlives its L2 write; and a
 * change L2 missed stands as long as an entry whose write took a while may live.
 */
import { describe, expect, it } from 'vitest'
import { createTable, memoryL2 } from '../src/index.js'
import type { L2Store } from '../src/store.js'
import { manualClock } from '../src/testing.js'
import { settle } from './support/latch.js'

const T0 = 1_000_000

/** `memoryL2`, with the `set` of the ids in `held` waiting (unsent) until {@link release}, and the `set` of the ids in `failing` refused. */
function gatedL2(clock: ReturnType<typeof manualClock>) {
  const inner = memoryL2({ clock })
  const held = new Set<unknown>()
  const failing = new Set<unknown>()
  const waiting: (() => void)[] = []
  const store: L2Store = {
    get: (t, id) => inner.get(t, id),
    getMany: (t, ids) => inner.getMany(t, ids),
    nextVersion: (t, id, floor) => inner.nextVersion(t, id, floor),
    set: (t, id, entry) => {
      if (failing.has(id)) return Promise.reject(new Error('L2 down for this write'))
      if (!held.has(id)) return inner.set(t, id, entry)
      return new Promise<boolean>((resolve, reject) => waiting.push(() => void inner.set(t, id, entry).then(resolve, reject)))
    },
    clear: (t) => inner.clear(t),
    tagVersions: (t, tags) => inner.tagVersions!(t, tags),
    invalidateTags: (t, tags, floor) => inner.invalidateTags!(t, tags, floor),
    close: () => inner.close(),
  }
  return { store, held, failing, release: () => waiting.splice(0).forEach((go) => go()) }
}

/** Moves the clock `ms` on, 1 ms at a time, letting promises settle at each step (the sweeper's ticks run). */
async function step(clock: ReturnType<typeof manualClock>, ms: number) {
  for (let i = 0; i < ms; i++) {
    clock.advance(1)
    await settle()
  }
}

describe('a put in progress while the sweeper runs', () => {
  it('keeps its row out of L1 when a tag of it was invalidated meanwhile, whatever the sweeper forgot', async () => {
    const clock = manualClock(T0)
    const l2 = gatedL2(clock)
    const table = createTable<string>({ name: 'p', ttl: 16, jitter: 0, sweepInterval: 1, clock, l2: l2.store })
    l2.held.add('a')
    const put = table.put('a', 'born before the invalidation', { tags: ['T'], ttl: 100_000 })
    await settle()
    await table.invalidateTags(['T'])
    await step(clock, 5) // sweep passes run while the put waits
    expect(table.stats().sweeps).toBeGreaterThan(0)
    l2.held.delete('a')
    l2.release()
    expect(await put).toMatchObject({ applied: false })
    expect(table.peek('a')).toBeUndefined()
    expect(await table.fetch('a', () => 'loaded')).toBe('loaded')
    await table.close()
  })

  it('is refused by a newer local invalidate even once the sweeper took its tombstone, and L2 refuses its write too', async () => {
    const clock = manualClock(T0)
    const l2 = gatedL2(clock)
    const table = createTable<string>({ name: 'p', ttl: 20, loadTimeout: 20, jitter: 0, sweepInterval: 1, clock, l2: l2.store })
    l2.held.add('a')
    const put = table.put('a', 'older')
    await settle()
    l2.held.delete('a')
    expect(await table.invalidate('a')).toMatchObject({ applied: true, l2: 'written' })
    await step(clock, 30) // past max(ttl, loadTimeout): the sweeper reclaims the tombstone
    l2.release() // the put's write lands now
    expect(await put).toMatchObject({ applied: false, l2: 'refused' })
    expect(await table.fetch('a', () => 'reloaded')).toBe('reloaded')
    await table.close()
  })

  it('a change L2 missed stands as long as an entry whose write took a while lives there', async () => {
    const clock = manualClock(T0)
    const l2 = gatedL2(clock)
    const table = createTable<string>({ name: 'm', ttl: 20, loadTimeout: 20, jitter: 0, sweepInterval: 5, clock, l2: l2.store })
    l2.held.add('a')
    const put = table.put('a', 'old', { ttl: 100_000 })
    await settle()
    await step(clock, 45) // the write takes 45 ms, within L2's timeout
    l2.held.delete('a')
    l2.release()
    expect(await put).toMatchObject({ applied: true, l2: 'written' })
    l2.failing.add('a')
    expect(await table.invalidate('a')).toMatchObject({ applied: true, l2: 'failed' })
    l2.failing.delete('a')
    while (clock.now() < T0 + 100_010) {
      clock.advance(5)
      await settle()
    }
    expect(await table.fetch('a', () => 'reloaded')).toBe('reloaded') // L2 still holds 'old' until T0 + 100,045
    await table.close()
  })
})
