/**
 * A put in progress and a newer change heard from another process: once both resolved, the putting
 * process never answers the put's older value. A put registers its id with the owner before it asks
 * L2 anything, its version included; a change heard while it waits (a put, an invalidate, a clear, a
 * gap) fences it, as it fences a flight, so its value is not stored in L1 (the next read finds the
 * newer entry in L2).
 */
import { describe, expect, it } from 'vitest'
import type { Bus, BusDelivery } from '../src/bus/bus.js'
import { type Table, createTable, localBus, memoryL2 } from '../src/index.js'
import type { L2Store } from '../src/store.js'
import { chaosL2, manualClock } from '../src/testing.js'
import { heldWrites } from './support/held-l2.js'
import { latchedLoader, outcome, settle } from './support/latch.js'

const NAME = 'puts'

/** `bus`, as one process sees it: {@link gap} tells its subscribers the bus may have lost messages. */
function gappyBus(bus: Bus) {
  const handlers: ((delivery: BusDelivery) => void)[] = []
  const seen: Bus = {
    publish: (message) => bus.publish(message),
    subscribe: (handler) => (handlers.push(handler), bus.subscribe(handler)),
    close: async () => {},
  }
  return { seen, gap: () => handlers.forEach((handler) => handler({ type: 'gap' })) }
}

/** Process A writes through a store whose answers it holds (its write fails instead, with `fail`); process B writes straight to it; one bus. */
function world(options: { late?: boolean; lease?: boolean } = {}) {
  const clock = manualClock(0)
  const store = memoryL2({ clock })
  const writes = heldWrites(store, options.late)
  const bus = localBus()
  const busOfA = gappyBus(bus)
  const lease = options.lease ?? false
  const a = createTable<string>({ name: NAME, clock, bus: busOfA.seen, l2: writes.held, lease })
  const b = createTable<string>({ name: NAME, clock, bus, l2: store, lease })
  return { clock, store, writes, bus, a, b, gap: busOfA.gap, close: () => Promise.all([a.close(), b.close()]) }
}

/** A's put of `k` (version 1), started and waiting on its L2 write's answer. */
async function putWaiting(a: ReturnType<typeof world>['a'], writes: ReturnType<typeof heldWrites>, options: { tags?: string[] } = {}) {
  const put = outcome(a.put('k', 'v1', { version: 1, ...options }))
  await settle()
  expect(writes.pending).toBe(1)
  return put
}

/** Lets A's held write answer, and the put settle. */
async function answer(writes: ReturnType<typeof heldWrites>): Promise<void> {
  writes.release()
  await settle()
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

  it('leaves no older value in L1 when an invalidate is heard: the next read loads (with leases or without)', async () => {
    for (const lease of [false, true]) {
      const { writes, a, b, close } = world({ lease })
      const first = await putWaiting(a, writes)
      await b.invalidate('k', { version: 2 })
      await settle()
      await answer(writes)
      expect(first.value, `lease ${lease}`).toMatchObject({ applied: false, l2: 'written' })
      expect(await a.fetch('k', () => 'origin'), `lease ${lease}`).toBe('origin')
      await close()
    }
  })

  it('is applied when the change heard is older than it, or of another id', async () => {
    const { writes, a, b, close } = world({ late: true })
    const first = await putWaiting(a, writes)
    await b.invalidate('k', { version: 0 })
    await b.put('other', 'o', { version: 5 })
    await settle()
    await answer(writes)
    expect(first.value).toMatchObject({ applied: true, l2: 'written', version: 1 })
    expect(a.peek('k')).toBe('v1')
    await close()
  })

  it('an equal version heard from another process fences it too (it may be another change)', async () => {
    const { writes, a, b, close } = world({ late: true })
    const first = await putWaiting(a, writes)
    await b.put('k', 'other v1', { version: 1 })
    await settle()
    await answer(writes) // L2 keeps the entry it holds (an equal version is not newer)
    expect(first.value).toMatchObject({ applied: false })
    expect(a.peek('k')).toBeUndefined()
    await close()
  })

  it('leaves no older value when its L2 write fails meanwhile', async () => {
    const clock = manualClock(0)
    const store = memoryL2({ clock })
    let failWrite: (error: Error) => void = () => {}
    const failing: L2Store = {
      get: (t, i) => store.get(t, i),
      set: () => new Promise<boolean>((_, reject) => (failWrite = reject)),
      nextVersion: (t, i, floor) => store.nextVersion(t, i, floor),
      clear: (t) => store.clear(t),
      close: () => store.close(),
    }
    const bus = localBus()
    const a = createTable<string>({ name: NAME, clock, bus, l2: failing })
    const b = createTable<string>({ name: NAME, clock, bus, l2: store })
    const first = outcome(a.put('k', 'v1', { version: 1 }))
    await settle()
    await b.put('k', 'v2', { version: 2 })
    await settle()
    failWrite(new Error('L2 is down'))
    await settle()
    expect(first.value).toMatchObject({ applied: false, l2: 'failed' })
    expect(await a.fetch('k', () => 'never')).toBe('v2')
    await Promise.all([a.close(), b.close()])
  })

  it('a clear heard, or a bus gap, fences it; the next put of the id is applied as usual', async () => {
    for (const lose of ['clear', 'gap'] as const) {
      const { writes, a, b, gap, close } = world()
      const first = await putWaiting(a, writes)
      if (lose === 'clear') await b.clear()
      else gap()
      await settle()
      await answer(writes)
      expect(first.value, lose).toMatchObject({ applied: false })
      expect(a.peek('k'), lose).toBeUndefined()
      writes.hold()
      const next = outcome(a.put('k', 'v3', { version: 3 }))
      await settle()
      await answer(writes)
      expect(next.value, lose).toMatchObject({ applied: true, l2: 'written' })
      expect(a.peek('k'), lose).toBe('v3')
      await close()
    }
  })

  it('a clear of this table fences it, whichever of the two L2 took first', async () => {
    const { writes, a, close } = world()
    const first = await putWaiting(a, writes) // L2 holds v1; the clear removes it
    await a.clear()
    await answer(writes)
    expect(first.value).toMatchObject({ applied: false, l2: 'written' })
    expect(await a.fetch('k', () => 'origin')).toBe('origin')
    await close()
  })

  it('a clear of this table still on its way to L2 fences it, and the row it would have replaced goes at once: a read after the put resolved gets the put’s value', async () => {
    const clock = manualClock(0)
    const store = memoryL2({ clock })
    const waiting: (() => void)[] = []
    let holding = false
    const held = <T>(call: () => Promise<T>) => (holding ? new Promise<T>((resolve, reject) => waiting.push(() => void call().then(resolve, reject))) : call())
    const l2: L2Store = {
      get: (t, i) => store.get(t, i),
      nextVersion: (t, i, floor) => store.nextVersion(t, i, floor),
      set: (t, i, entry) => held(() => store.set(t, i, entry)),
      clear: (t) => held(() => store.clear(t)),
      close: async () => {},
    }
    const table = createTable<string>({ name: NAME, clock, l2 })
    expect(await table.fetch('k', () => 'v0')).toBe('v0')
    holding = true
    const put = outcome(table.put('k', 'v1', { version: 1 }))
    await settle()
    const cleared = outcome(table.clear()) // fences the put
    await settle()
    expect(waiting).toHaveLength(2) // the put's write, then the clear's L2 call
    waiting.shift()!() // the put's write answers; the clear's is still on its way
    await settle()
    expect(put.value).toMatchObject({ applied: false, l2: 'written' })
    expect(cleared.state).toBe('pending')
    expect(table.peek('k')).toBeUndefined() // the value the put replaced is no longer served
    expect(await table.fetch('k', () => 'origin')).toBe('v1') // from L2, where the put landed
    holding = false
    waiting.splice(0).forEach((go) => go())
    await settle()
    expect(cleared.value).toMatchObject({ l2: 'cleared' })
    await table.close()
  })

  it('with tags, in a namespace: a newer put heard fences it', async () => {
    const { writes, a, b, close } = world()
    const put = outcome(a.namespace('n').put('k', 'v1', { version: 1, tags: ['t'] }))
    await settle()
    expect(writes.pending).toBe(1)
    await b.namespace('n').put('k', 'v2', { version: 2, tags: ['t'] })
    await b.put('k', 'base v9', { version: 9 }) // the base table's id is another id
    await settle()
    await answer(writes)
    expect(put.value).toMatchObject({ applied: false })
    expect(await a.namespace('n').fetch('k', () => 'never')).toBe('v2')
    await close()
  })

  it('a flight of the id in progress is fenced as well: neither its answer nor the put is stored', async () => {
    const { writes, a, b, close } = world()
    const origin = latchedLoader<string>()
    const read = outcome(a.fetch('k', origin.loader))
    await settle()
    const first = await putWaiting(a, writes)
    await b.put('k', 'v2', { version: 2 })
    await settle()
    origin.only().resolve('v0')
    await answer(writes)
    expect(read.value).toBe('v0') // its waiter still gets its answer
    expect(first.value).toMatchObject({ applied: false })
    expect(await a.fetch('k', () => 'never')).toBe('v2')
    await close()
  })

  it('leaves a tombstone at the version heard: the next read does not take the older entry L2 still holds', async () => {
    // The change heard never reached L2 (its writer's L2 write failed): L2 holds A's v1.
    const { writes, a, bus, close } = world()
    const first = await putWaiting(a, writes)
    await bus.publish({ table: NAME, id: 'k', version: 2, kind: 'put', origin: 'elsewhere' })
    await answer(writes)
    expect(first.value).toMatchObject({ applied: false, l2: 'written' })
    expect(await a.fetch('k', () => 'origin')).toBe('origin')
    await close()
  })

  it('a tag invalidation or a namespace clear heard meanwhile leaves its row stale by its birth: the next read loads', async () => {
    for (const change of ['tags', 'clear'] as const) {
      const { writes, a, b, close } = world()
      const put = outcome(a.namespace('n').put('k', 'v1', { version: 1, tags: ['t'] }))
      await settle()
      expect(writes.pending).toBe(1)
      if (change === 'tags') await b.namespace('n').invalidateTags(['t'])
      else await b.namespace('n').clear()
      await settle()
      await answer(writes)
      expect(put.state, change).toBe('fulfilled')
      expect(await a.namespace('n').fetch('k', () => 'origin'), change).toBe('origin')
      await close()
    }
  })

  describe('while L2 still mints its version', () => {
    /** `store`, whose `nextVersion` mints at once but answers only on `release`. */
    function heldMint(store: L2Store) {
      const waiting: (() => void)[] = []
      const held: L2Store = {
        get: (t, i) => store.get(t, i),
        set: (t, i, entry) => store.set(t, i, entry),
        nextVersion: (t, i, floor) => {
          const minted = store.nextVersion(t, i, floor)
          return new Promise<number>((resolve, reject) => waiting.push(() => void minted.then(resolve, reject)))
        },
        clear: (t) => store.clear(t),
        tagVersions: (t, tags) => store.tagVersions!(t, tags),
        invalidateTags: (t, tags, floor) => store.invalidateTags!(t, tags, floor),
        close: () => store.close(),
      }
      return { held, release: () => waiting.splice(0).forEach((go) => go()), pending: () => waiting.length }
    }

    it('a newer change heard fences it: not applied, nothing stored, and L2 does not take its older value', async () => {
      const clock = manualClock(0)
      const store = memoryL2({ clock })
      const mint = heldMint(store)
      const bus = localBus()
      const a = createTable<string>({ name: NAME, clock, bus, l2: mint.held })
      const put = outcome(a.put('k', 'a-value')) // L2 mints version 1; its answer is held
      await settle()
      expect(mint.pending()).toBe(1)
      // Another process's put of k at version 2 whose own L2 write failed (so L2 would not refuse A's): heard now.
      await bus.publish({ table: NAME, id: 'k', version: 2, kind: 'put', origin: 'elsewhere' })
      await settle()
      mint.release()
      await settle()
      await settle()
      expect(put.value).toMatchObject({ version: 1, applied: false, l2: 'refused' })
      expect(a.peek('k')).toBeUndefined()
      expect(await store.get(NAME, 'k')).toBeUndefined()
      await a.close()
    })

    it('a tag of its row invalidated, or its namespace cleared, here or heard, while its version is minted: not applied, nothing stored, and no process takes its value', async () => {
      const changes = {
        'namespace cleared here': (here: Table<string>, _other: Table<string>) => here.namespace('n').clear(),
        'namespace cleared in another process': (_here: Table<string>, other: Table<string>) => other.namespace('n').clear(),
        'tag invalidated in the namespace': (here: Table<string>, _other: Table<string>) => here.namespace('n').invalidateTags(['t']),
        'tag invalidated in the base table': (here: Table<string>, _other: Table<string>) => here.invalidateTags(['t']),
      }
      for (const [change, make] of Object.entries(changes)) {
        const clock = manualClock(1_000)
        const store = memoryL2({ clock })
        const mint = heldMint(store)
        const bus = localBus()
        const here = createTable<string>({ name: NAME, clock, bus, l2: mint.held })
        const other = createTable<string>({ name: NAME, clock, bus, l2: store })
        const first = here.namespace('n').put('k', 'old', { tags: ['t'] })
        await settle()
        mint.release()
        expect(await first, change).toMatchObject({ applied: true })
        expect(here.namespace('n').peek('k'), change).toBe('old')
        const put = outcome(here.namespace('n').put('k', 'new', { tags: ['t'] }))
        await settle()
        expect(mint.pending(), change).toBe(1)
        await make(here, other)
        await settle()
        mint.release()
        await settle()
        await settle()
        expect(put.value?.applied, change).toBe(false)
        expect(here.namespace('n').peek('k'), change).toBeUndefined()
        const cold = createTable<string>({ name: NAME, clock, bus, l2: store })
        expect(await cold.namespace('n').fetch('k', () => 'origin'), change).toBe('origin')
        await Promise.all([here.close(), other.close(), cold.close()])
      }
    })

    it('two processes: B minted after A and its L2 write failed; A ends without its older value, B holds its own', async () => {
      const clock = manualClock(0)
      const store = memoryL2({ clock })
      const mint = heldMint(store)
      const bus = localBus()
      const failing = chaosL2(store, clock)
      const a = createTable<string>({ name: NAME, clock, bus, l2: mint.held })
      const b = createTable<string>({ name: NAME, clock, bus, l2: failing })
      const put = outcome(a.put('k', 'a-value'))
      await settle()
      failing.fail('set', { kind: 'throw' }, { times: 1 })
      const second = await b.put('k', 'b-value')
      expect(second).toMatchObject({ applied: true, l2: 'failed', broadcast: true })
      await settle()
      mint.release()
      await settle()
      await settle()
      expect(put.value!.version).toBeLessThan(second.version)
      expect({ applied: put.value!.applied, a: a.peek('k'), b: b.peek('k') }).toEqual({ applied: false, a: undefined, b: 'b-value' })
      await Promise.all([a.close(), b.close()])
    })
  })
})
