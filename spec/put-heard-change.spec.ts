/**
 * A put in progress and a newer change heard from another process: once both resolved, the putting
 * process never answers the put's older value. A put registers its id with the owner before it asks
 * L2 anything; a change heard while it waits (a put, an invalidate, a clear, a gap) fences it, as it
 * fences a flight, so its value is not stored in L1 (the next read finds the newer entry in L2).
 */
import { describe, expect, it } from 'vitest'
import { createTable, localBus, memoryL2 } from '../src/index.js'
import type { L2Store } from '../src/store.js'
import { manualClock } from '../src/testing.js'
import { outcome, settle } from './support/latch.js'

const NAME = 'puts'

/**
 * `store`, with its `set` answers held back while `held` is on: the write reaches the store at once
 * (or, with `late`, only on release), and its answer waits for {@link release}.
 */
function heldWrites(store: L2Store, late = false) {
  const waiting: (() => void)[] = []
  const held: L2Store = {
    get: (t, i) => store.get(t, i),
    set: (t, i, entry) => {
      if (late) return new Promise<boolean>((resolve, reject) => waiting.push(() => void store.set(t, i, entry).then(resolve, reject)))
      const written = store.set(t, i, entry)
      return new Promise<boolean>((resolve, reject) => waiting.push(() => void written.then(resolve, reject)))
    },
    nextVersion: (t, i, floor) => store.nextVersion(t, i, floor),
    clear: (t) => store.clear(t),
    tagVersions: (t, tags) => store.tagVersions!(t, tags),
    invalidateTags: (t, tags, floor) => store.invalidateTags!(t, tags, floor),
    close: () => store.close(),
  }
  return {
    held,
    /** Lets every held write answer. */
    release: () => waiting.splice(0).forEach((go) => go()),
    get pending() {
      return waiting.length
    },
  }
}

/** Process A writes through a store whose answers it holds; process B writes straight to it; one bus. */
function world(late = false) {
  const clock = manualClock(0)
  const store = memoryL2({ clock })
  const writes = heldWrites(store, late)
  const bus = localBus()
  const a = createTable<string>({ name: NAME, clock, bus, l2: writes.held })
  const b = createTable<string>({ name: NAME, clock, bus, l2: store })
  return { clock, store, writes, a, b, close: () => Promise.all([a.close(), b.close()]) }
}

describe('a put waiting on L2 while a newer change of its id is heard', () => {
  it('leaves no older value in L1: a newer put heard fences it (given versions)', async () => {
    const { writes, a, b, close } = world()
    const first = outcome(a.put('k', 'v1', { version: 1 }))
    await settle()
    expect(writes.pending).toBe(1) // v1 is in L2; A waits for the answer
    expect(await b.put('k', 'v2', { version: 2 })).toMatchObject({ applied: true, l2: 'written', broadcast: true })
    await settle() // A heard B's change
    writes.release()
    await settle()
    expect(first.state).toBe('fulfilled')
    expect(first.value).toMatchObject({ applied: false, l2: 'written', version: 1 })
    expect(a.peek('k')).toBeUndefined()
    expect(await a.fetch('k', () => 'never')).toBe('v2')
    await close()
  })

  it('leaves no older value in L1 with minted versions', async () => {
    const { writes, a, b, close } = world()
    const first = outcome(a.put('k', 'v1'))
    await settle()
    expect(writes.pending).toBe(1)
    const second = await b.put('k', 'v2')
    await settle()
    writes.release()
    await settle()
    expect(first.value!.version).toBeLessThan(second.version)
    expect(first.value).toMatchObject({ applied: false })
    expect(await a.fetch('k', () => 'never')).toBe('v2')
    await close()
  })
})
