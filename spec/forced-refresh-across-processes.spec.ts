/**
 * A forced refresh replaces the id's value in every process: once its answer is in L2, the other
 * processes on the bus are told (as by a put), so none keeps answering the row it held at the
 * version the refresh replaced, and a put another process had in progress, whose entry the refresh
 * read, gives way to it in that process's L1 as in L2.
 */
import { describe, expect, it } from 'vitest'
import { createTable, localBus, memoryL2 } from '../src/index.js'
import type { L2Store } from '../src/store.js'
import { manualClock } from '../src/testing.js'
import { latchedLoader, outcome, settle } from './support/latch.js'

const NAME = 'refreshed'

/** `store`, whose first `set` reaches it at once but answers only on `release`: a put whose entry landed and whose answer is on its way. */
function firstAnswerHeld(store: L2Store) {
  let release: (() => void) | undefined
  let holding = true
  const held: L2Store = {
    get: (t, i) => store.get(t, i),
    set: (t, i, entry) => {
      const written = store.set(t, i, entry)
      if (!holding) return written
      holding = false
      return new Promise<boolean>((resolve, reject) => {
        release = () => void written.then(resolve, reject)
      })
    },
    nextVersion: (t, i, floor) => store.nextVersion(t, i, floor),
    clear: (t) => store.clear(t),
    close: () => store.close(),
  }
  return { held, release: () => release!() }
}

describe('a forced refresh, seen from the other processes', () => {
  it('a process that holds the row at the version it replaced drops it, and reads the new value', async () => {
    const clock = manualClock(0)
    const l2 = memoryL2({ clock })
    const bus = localBus()
    const options = { name: NAME, jitter: 0, sweepInterval: 1e9, clock, l2, bus }
    const [a, b] = [createTable<string>(options), createTable<string>(options)]
    expect(await a.fetch('k', () => 'old')).toBe('old')
    expect(await b.fetch('k', () => 'never')).toBe('old') // from L2, at the same version
    expect(await a.fetch('k', () => 'new', { forceRefresh: true })).toBe('new')
    await settle()
    expect(b.peek('k')).toBeUndefined()
    expect(await b.fetch('k', () => 'never')).toBe('new')
    expect(b.stats()).toMatchObject({ coh_applied: 1, loads: 0 })
    await Promise.all([a.close(), b.close()])
  })

  it("a put another process had in progress, whose entry it read: that process's L1 gives way too", async () => {
    const clock = manualClock(0)
    const store = memoryL2({ clock })
    const bus = localBus()
    const ofPutter = firstAnswerHeld(store)
    const options = { name: NAME, jitter: 0, sweepInterval: 1e9, clock, bus }
    const refresher = createTable<string>({ ...options, l2: store })
    const putter = createTable<string>({ ...options, l2: ofPutter.held })
    const put = outcome(putter.put('k', 'put'))
    await settle() // the put's entry is in L2; its answer, and so its broadcast, is on its way
    const origin = latchedLoader<string>()
    const refreshed = outcome(refresher.fetch('k', origin.loader, { forceRefresh: true }))
    await settle()
    origin.only().resolve('loaded')
    await settle()
    ofPutter.release()
    await settle()
    expect(refreshed.value).toBe('loaded')
    expect(put.value).toMatchObject({ applied: false, l2: 'written' })
    expect(await store.get(NAME, 'k')).toMatchObject({ value: 'loaded' })
    expect(await putter.fetch('k', () => 'never')).toBe('loaded')
    expect(await refresher.fetch('k', () => 'never')).toBe('loaded')
    await Promise.all([refresher.close(), putter.close()])
  })
})
