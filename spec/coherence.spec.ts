/**
 * Coherence within a process: versioned put/invalidate, fencing of flights in progress (no stale
 * write-back), bus deliveries (messages, gaps, malformed ones), bus failures, and leaving the bus.
 *
 * Every race is decided by the test: loaders are latched (`latchedLoader`), time is a manual clock,
 * and the in-process bus delivers synchronously. No sleeps.
 *
 * Several tests here once pinned bugs with `it.fails` (tombstones swept early, version 0 assigned,
 * invalidate's `applied`, unvalidated deliveries, tombstones for unread ids, a destructured
 * `setVersion`); they now assert the fixed behaviour. A new bug found in src/ is pinned the same way:
 * `it.fails`, with a comment saying what is wrong, dropped once the fix lands.
 */
import { describe, expect, it } from 'vitest'
import type { Bus, BusDelivery, ChangeMessage, CoherenceMessage } from '../src/store.js'
import { type Id, type LoaderContext, type TableOptions, createTable, localBus, memoryL2 } from '../src/index.js'
import { PUBLISH_TIMEOUT } from '../src/limits.js'
import { manualClock } from '../src/testing.js'
import { latchedLoader, outcome, settle } from './support/latch.js'

const NAME = 'catalog'

/** Tables named `catalog` on one manual clock, one memory L2 and one local bus (each optional). */
function world({ l2 = true, bus = true }: { l2?: boolean; bus?: boolean } = {}) {
  const clock = manualClock(0)
  const store = l2 ? memoryL2({ clock }) : undefined
  const local = bus ? localBus() : undefined
  const make = (options: TableOptions = {}) => createTable<string | undefined, Id>({ name: NAME, ttl: 10_000, jitter: 0, sweepInterval: 1e9, clock, l2: store, bus: local, ...options })
  /** Publishes a message as another table instance would (a foreign origin). */
  const send = (patch: Partial<ChangeMessage> & Pick<ChangeMessage, 'id' | 'version'>) => local!.publish({ table: NAME, kind: 'invalidate', origin: 'elsewhere', ...patch })
  return { clock, l2: store!, bus: local!, make, send }
}

/** A bus the test drives by hand: it records what is published and delivers what the test says. */
function manualBus(publish: (message: CoherenceMessage) => Promise<void> = async () => {}) {
  const handlers = new Set<(delivery: BusDelivery) => void>()
  const published: CoherenceMessage[] = []
  const bus: Bus = {
    publish: (message) => {
      published.push(message)
      return publish(message)
    },
    subscribe(handler) {
      handlers.add(handler)
      return () => void handlers.delete(handler)
    },
    close: async () => handlers.clear(),
  }
  return {
    bus,
    published,
    subscribers: () => handlers.size,
    /** Hands `delivery` to every handler, exactly as a transport would (no validation here). */
    deliver(delivery: unknown) {
      for (const handler of [...handlers]) handler(delivery as BusDelivery)
    },
  }
}

/** A loader that answers `value` at `version` (through `context.setVersion`). */
const versioned = (value: string, version: number) => (_id: string | number, context: LoaderContext) => {
  context.setVersion(version)
  return value
}

describe('the stale write-back race', () => {
  it('a local invalidate fences the flight in progress: its waiters get v1, neither layer keeps v1, the next fetch loads again', async () => {
    const { l2, make } = world({ bus: false })
    const table = make()
    const origin = latchedLoader<string>()
    const waiters = [table.fetch('k', origin.loader), table.fetch('k', origin.loader), table.fetch('k', origin.loader)]
    await settle()
    const read = origin.only() // the loader has read v1 from the source; its answer is on its way

    expect(await table.invalidate('k', { version: 2 })).toMatchObject({ applied: true, version: 2, broadcast: false })
    expect(await l2.get(NAME, 'k')).toMatchObject({ kind: 'tombstone', version: 2 })
    read.resolve('v1')

    const answers = await Promise.all(waiters)
    expect(answers).toEqual(['v1', 'v1', 'v1']) // they asked before the change: they get the flight's answer
    expect(await l2.get(NAME, 'k')).toMatchObject({ kind: 'tombstone', version: 2 }) // not overwritten by v1
    expect(table.stats()).toMatchObject({ fenced: 1, fills: 0, flights: 1, coalesced: 2, inflight: 0 })

    // L1 does not hold v1: the next fetch misses and loads again, and its answer is stored at version 2.
    let loads = 0
    expect(await table.fetch('k', () => (loads++, 'v2'))).toBe('v2')
    expect(loads).toBe(1)
    expect(await l2.get(NAME, 'k')).toMatchObject({ kind: 'value', value: 'v2', version: 2 })
    expect(await table.fetch('k', () => (loads++, 'v3'))).toBe('v2') // now a hit
    expect(loads).toBe(1)
    expect(table.stats()).toMatchObject({ fenced: 1, fills: 1, loads: 2 })
    await table.close()
  })

  it('a fetch that starts after invalidate resolved never joins the fenced flight', async () => {
    const { l2, make } = world({ bus: false })
    const table = make()
    const old = latchedLoader<string>()
    const before = table.fetch('k', old.loader)
    await settle()
    await table.invalidate('k', { version: 2 })

    const fresh = latchedLoader<string>()
    const after = table.fetch('k', fresh.loader)
    await settle()
    expect(fresh.calls).toHaveLength(1) // its own loader runs: it did not join
    expect(table.stats()).toMatchObject({ coalesced: 0, flights: 2, inflight: 2 })

    // Whichever finishes first, the late v1 never lands on top of v2.
    fresh.only().resolve('v2')
    expect(await after).toBe('v2')
    old.only().resolve('v1')
    expect(await before).toBe('v1')
    expect(await l2.get(NAME, 'k')).toMatchObject({ kind: 'value', value: 'v2', version: 2 })
    expect(await table.fetch('k', () => 'reloaded')).toBe('v2')
    expect(table.stats()).toMatchObject({ fenced: 1, fills: 1, loads: 2 })
    await table.close()
  })

  it('a fenced flight whose loader fails answers its waiters with the error and stores nothing', async () => {
    const { make } = world({ bus: false })
    const table = make()
    const origin = latchedLoader<string>()
    const waiter = outcome(table.fetch('k', origin.loader))
    await settle()
    await table.invalidate('k', { version: 2 })
    const failure = new Error('origin down')
    origin.only().reject(failure)
    await settle()
    expect(waiter).toMatchObject({ state: 'rejected', error: failure })
    expect(table.stats()).toMatchObject({ load_errors: 1, inflight: 0 })
    expect(await table.fetch('k', () => 'v2')).toBe('v2')
    await table.close()
  })

  it('an invalidate from another table over the bus fences the flight the same way', async () => {
    const { l2, make } = world()
    const [a, b] = [make(), make()]
    const origin = latchedLoader<string>()
    const waiters = [b.fetch('k', origin.loader), b.fetch('k', origin.loader)]
    await settle()

    expect(await a.invalidate('k', { version: 2 })).toMatchObject({ applied: true, version: 2, broadcast: true })
    expect(b.stats()).toMatchObject({ coh_applied: 1, coh_stale: 0 })

    // A fetch in B that starts after the message never joins the fenced flight.
    const fresh = latchedLoader<string>()
    const after = b.fetch('k', fresh.loader)
    await settle()
    expect(fresh.calls).toHaveLength(1)

    origin.only().resolve('v1')
    expect(await Promise.all(waiters)).toEqual(['v1', 'v1'])
    expect(await l2.get(NAME, 'k')).toMatchObject({ kind: 'tombstone', version: 2 })
    expect(b.stats()).toMatchObject({ fenced: 1, fills: 0 })

    fresh.only().resolve('v2')
    expect(await after).toBe('v2')
    expect(await l2.get(NAME, 'k')).toMatchObject({ kind: 'value', value: 'v2', version: 2 })
    expect(await a.fetch('k', () => 'unused')).toBe('v2') // A reads B's fresh load from L2
    expect(a.stats()).toMatchObject({ l2_hits: 1, loads: 0 })
    await Promise.all([a.close(), b.close()])
  })

  it('a put from another table over the bus fences the flight; the next fetch reads the put’s value from L2', async () => {
    const { l2, make } = world()
    const [a, b] = [make(), make()]
    const origin = latchedLoader<string>()
    const waiter = b.fetch('k', origin.loader)
    await settle()

    expect(await a.put('k', 'v2', { version: 2 })).toMatchObject({ applied: true, version: 2, broadcast: true })
    expect(b.stats().coh_applied).toBe(1)
    origin.only().resolve('v1')
    expect(await waiter).toBe('v1')
    expect(await l2.get(NAME, 'k')).toMatchObject({ kind: 'value', value: 'v2', version: 2 })

    let loads = 0
    expect(await b.fetch('k', () => (loads++, 'from origin'))).toBe('v2')
    expect(loads).toBe(0)
    expect(b.stats()).toMatchObject({ fenced: 1, l2_hits: 1, fills: 1 })
    await Promise.all([a.close(), b.close()])
  })

  it('without a bus, a flight whose write-back L2 refuses (it holds a newer entry) answers its waiters, stores nothing, and counts fenced', async () => {
    const { l2, make } = world({ bus: false })
    const [a, b] = [make(), make()]
    const origin = latchedLoader<string>()
    const waiter = a.fetch('k', origin.loader)
    await settle() // a's flight has read L2 (nothing) and called its loader
    expect(origin.calls).toHaveLength(1)

    expect(await b.put('k', 'new')).toMatchObject({ applied: true, l2: 'written', broadcast: false })
    origin.only().resolve('old')
    expect(await waiter).toBe('old')
    await settle()
    expect(a.stats()).toMatchObject({ fenced: 1, fills: 0, coh_applied: 0 }) // nothing was heard: L2 refused the write-back
    expect(a.peek('k')).toBeUndefined()
    expect(await l2.get(NAME, 'k')).toMatchObject({ kind: 'value', value: 'new' })
    let loads = 0
    expect(await a.fetch('k', () => (loads++, 'from origin'))).toBe('new')
    expect(loads).toBe(0)
    await Promise.all([a.close(), b.close()])
  })

  describe('with coalescing off: flights are not joinable, and still store nothing stale', () => {
    for (const via of ['local invalidate', 'bus invalidate', 'bus put'] as const) {
      for (const withL2 of [true, false]) {
        it(`${via}, ${withL2 ? 'with' : 'without'} L2`, async () => {
          const { l2, make } = world({ l2: withL2 })
          const [a, b] = [make(), make({ coalesce: false })]
          const origin = latchedLoader<string>()
          const waiters = [b.fetch('k', origin.loader), b.fetch('k', origin.loader)]
          await settle()
          expect(origin.calls).toHaveLength(2) // two flights, neither joinable

          if (via === 'local invalidate') await b.invalidate('k', { version: 2 })
          else if (via === 'bus invalidate') await a.invalidate('k', { version: 2 })
          else await a.put('k', 'v2', { version: 2 })

          for (const call of origin.calls) call.resolve('v1')
          expect(await Promise.all(waiters)).toEqual(['v1', 'v1'])
          expect(b.stats()).toMatchObject({ fenced: 2, fills: 0, inflight: 0 })
          if (withL2) expect(await l2.get(NAME, 'k')).toMatchObject({ version: 2, ...(via === 'bus put' ? { value: 'v2' } : { kind: 'tombstone' }) })

          const loader = latchedLoader<string>()
          const next = b.fetch('k', loader.loader)
          await settle()
          if (via === 'bus put' && withL2) {
            expect(loader.calls).toHaveLength(0) // L2 holds the put's value
            expect(await next).toBe('v2')
          } else {
            loader.only().resolve('v2') // L1 did not keep v1: the next fetch loads again
            expect(await next).toBe('v2')
          }
          await Promise.all([a.close(), b.close()])
        })
      }
    }
  })

  // Was a bug (the sweeper and the rows): a tombstone had expiresAt = -Infinity, so when the id's
  // *earlier* row's sweep bucket came due, the sweeper met the tombstone there and reclaimed it long
  // before `max(ttl, loadTimeout)`; an unregistered flight (coalescing off) that read the source
  // before the invalidate then stored its stale answer (no L2 to refuse it). A tombstone now keeps
  // its forget time (`expiresAt = -forgetAt`) and is reclaimed only once that has passed.
  it('a tombstone outlives the earlier row’s sweep bucket, so a flight from before it cannot store its answer', async () => {
    const clock = manualClock(0)
    const table = createTable<string | undefined, Id>({ name: NAME, ttl: 1_000, jitter: 0, sweepInterval: 100, coalesce: false, clock })
    await table.fetch('k', () => 'v0') // row expires at 1000: indexed in the bucket [1000, 1100)
    clock.set(1_000)
    const origin = latchedLoader<string>()
    const before = table.fetch('k', origin.loader) // reads the source before the change
    await settle()
    await table.invalidate('k', { version: 2 })
    const swept = table.stats().swept
    clock.set(1_100) // sweep passes at 1,000 and 1,100 meet the tombstone, which stays
    expect(table.stats()).toMatchObject({ size: 1, swept })
    origin.only().resolve('v0 (stale)')
    expect(await before).toBe('v0 (stale)')
    expect(table.stats()).toMatchObject({ fenced: 1, fills: 1 }) // only the first fill, at 0, was stored
    expect(await table.fetch('k', () => 'v2')).toBe('v2')
    await table.close()
  })

  it('a tombstone is reclaimed once its forget time, max(ttl, loadTimeout) after it was written, has passed', async () => {
    const clock = manualClock(0)
    const table = createTable<string | undefined, Id>({ name: NAME, ttl: 1_000, loadTimeout: 5_000, jitter: 0, sweepInterval: 100, clock })
    clock.set(2_000)
    await table.invalidate('k', { version: 3 }) // forgotten at 7000
    clock.set(6_999)
    expect(table.stats()).toMatchObject({ size: 1, swept: 0 })
    expect(await table.put('k', 'v2', { version: 2 }).then((r) => r.applied)).toBe(false) // still held
    clock.set(7_100) // its bucket [7000, 7100) is due and its forget time has passed
    expect(table.stats()).toMatchObject({ size: 0, swept: 1 })
    expect(await table.put('k', 'v2', { version: 2 }).then((r) => r.applied)).toBe(true) // forgotten: nothing held
    await table.close()
  })

  describe('a change fences a running flight whether or not it is joinable', () => {
    for (const coalesce of [true, false]) {
      it(`coalescing ${coalesce ? 'on' : 'off'}: a flight that reports a version newer than the change is still not stored`, async () => {
        const { make } = world({ l2: false, bus: false })
        const table = make({ coalesce })
        const origin = latchedLoader<string>()
        const waiter = table.fetch('k', origin.loader)
        await settle()
        await table.invalidate('k', { version: 2 })
        const call = origin.only()
        call.context.setVersion(3) // not older than the tombstone: only the fence keeps it out
        call.resolve('v3?')
        expect(await waiter).toBe('v3?')
        expect(table.stats()).toMatchObject({ fenced: 1, fills: 0 })
        expect(await table.fetch('k', versioned('v3', 3))).toBe('v3')
        expect(table.stats()).toMatchObject({ fills: 1, loads: 2 })
        await table.close()
      })
    }
  })
})

describe('changes older than what is held', () => {
  it('an older put leaves L1 alone, is refused by L2 (applied: false), and is still broadcast as stale', async () => {
    const { l2, make } = world()
    const [a, b] = [make(), make()]
    expect(await b.fetch('k', versioned('v1', 1))).toBe('v1') // B holds the id (a row at 1)
    await a.put('k', 'v5', { version: 5 })
    expect(b.stats()).toMatchObject({ coh_applied: 1, coh_stale: 0, size: 1 }) // its row is now a tombstone at 5

    expect(await a.put('k', 'v3', { version: 3 })).toEqual({ applied: false, version: 3, l2: 'refused', broadcast: true })
    expect(await l2.get(NAME, 'k')).toMatchObject({ kind: 'value', value: 'v5', version: 5 })
    expect(b.stats()).toMatchObject({ coh_applied: 1, coh_stale: 1 }) // broadcast, and dropped as stale
    let loads = 0
    expect(await a.fetch('k', () => (loads++, 'x'))).toBe('v5') // L1 unchanged: still a hit
    expect(await b.fetch('k', () => (loads++, 'x'))).toBe('v5') // from L2
    expect(loads).toBe(0)
    expect(a.stats()).toMatchObject({ hits: 1, misses: 0 })
    await Promise.all([a.close(), b.close()])
  })

  it('an older invalidate leaves L1 alone, does not replace the newer L2 entry, and is still broadcast as stale', async () => {
    const { l2, make } = world()
    const [a, b] = [make(), make()]
    expect(await b.fetch('k', versioned('v1', 1))).toBe('v1') // B holds the id
    await a.put('k', 'v5', { version: 5 })
    expect(await a.invalidate('k', { version: 4 })).toEqual({ applied: false, version: 4, l2: 'refused', broadcast: true })
    expect(await l2.get(NAME, 'k')).toMatchObject({ kind: 'value', value: 'v5', version: 5 })
    expect(b.stats()).toMatchObject({ coh_applied: 1, coh_stale: 1 })
    expect(await a.fetch('k', () => 'x')).toBe('v5')
    expect(a.stats().hits).toBe(1)
    await Promise.all([a.close(), b.close()])
  })

  it('an equal version from another origin drops the row (it may be another change), and a local change at the held version applies', async () => {
    const { make, send } = world({ l2: false })
    const table = make()
    await table.put('k', 'v5', { version: 5 })
    await send({ id: 'k', version: 5 })
    expect(table.stats()).toMatchObject({ coh_applied: 1, coh_stale: 0, size: 1 }) // a tombstone at 5
    expect(await table.fetch('k', () => 'reloaded')).toBe('reloaded')
    expect(await table.put('k', 'v5 again', { version: 5 })).toMatchObject({ applied: true, version: 5, broadcast: true })
    expect(await table.fetch('k', () => 'x')).toBe('v5 again')
    await table.close()
  })

  it('a put older than what only L2 knows is refused by L2 and leaves L1 alone', async () => {
    const { make } = world({ bus: false })
    const [a, b] = [make(), make()]
    await a.put('k', 'v5', { version: 5 })
    expect(await b.put('k', 'v3', { version: 3 })).toEqual({ applied: false, version: 3, l2: 'refused', broadcast: false })
    expect(await b.fetch('k', () => 'x')).toBe('v5')
    expect(b.stats()).toMatchObject({ l2_hits: 1, size: 1 })
    await Promise.all([a.close(), b.close()])
  })

  // Was a bug (src/table.ts invalidate): invalidate ignored L2's refusal and answered applied: true.
  // It leaves an L1 tombstone at the older version, which is harmless: the next flight starts from
  // it and reads the newer L2 entry.
  it('an invalidate older than what only L2 knows answers applied: false, and the newer L2 entry is still served', async () => {
    const { l2, make } = world({ bus: false })
    const [a, b] = [make(), make()]
    await a.put('k', 'v5', { version: 5 })
    expect(await b.invalidate('k', { version: 3 })).toEqual({ applied: false, version: 3, l2: 'refused', broadcast: false })
    expect(await l2.get(NAME, 'k')).toMatchObject({ kind: 'value', value: 'v5', version: 5 })
    let loads = 0
    expect(await b.fetch('k', () => (loads++, 'x'))).toBe('v5')
    expect(loads).toBe(0)
    // A newer invalidate is applied in both layers.
    expect(await b.invalidate('k', { version: 6 })).toMatchObject({ applied: true, version: 6, broadcast: false })
    expect(await l2.get(NAME, 'k')).toMatchObject({ kind: 'tombstone', version: 6 })
    await Promise.all([a.close(), b.close()])
  })
})

describe('tombstones left by the bus', () => {
  // Was a bug (src/owner/owner.ts onCoherence): an applied message left a tombstone even for an id
  // the table never read, so a reader next to writers that touch many ids filled its capacity with
  // tombstones and skipped every fill of a new id (full_skips).
  it('messages about ids the table never read do not use up its capacity', async () => {
    const { make } = world({ l2: false })
    const writer = make()
    const reader = make({ capacity: 10 })
    for (let i = 0; i < 10; i++) await writer.put(`written-${i}`, 'x', { version: 1 })
    expect(reader.stats()).toMatchObject({ coh_applied: 10, coh_stale: 0, size: 0 })
    let loads = 0
    await reader.fetch('hot', () => (loads++, 'v'))
    await reader.fetch('hot', () => (loads++, 'v'))
    expect(reader.stats()).toMatchObject({ full_skips: 0, hits: 1, size: 1 })
    expect(loads).toBe(1)
    await Promise.all([writer.close(), reader.close()])
  })

  it('such a message leaves nothing held: a later, older message about the id is applied too, not stale', async () => {
    const { make, send } = world({ l2: false })
    const table = make()
    await send({ id: 'unread', version: 5 })
    await send({ id: 'unread', version: 3, kind: 'put' })
    await send({ id: 'unread', version: 3 })
    expect(table.stats()).toMatchObject({ coh_applied: 3, coh_stale: 0, size: 0 })
    await table.close()
  })

  it('a message about an id with a row leaves a tombstone at its version: older messages are stale after it', async () => {
    const { make, send } = world({ l2: false })
    const table = make()
    await table.fetch('k', versioned('v1', 1))
    await send({ id: 'k', version: 5 })
    expect(table.stats()).toMatchObject({ coh_applied: 1, size: 1 })
    await send({ id: 'k', version: 4, kind: 'put' })
    await send({ id: 'k', version: 3 })
    expect(table.stats()).toMatchObject({ coh_applied: 1, coh_stale: 2, size: 1 })
    await table.close()
  })

  // A message about an id whose only state is a running flight leaves a tombstone, joinable flight or not.
  for (const coalesce of [false, true]) {
    it(`a message about an id with only a running flight leaves a tombstone (coalescing ${coalesce ? 'on' : 'off'})`, async () => {
      const { make, send } = world({ l2: false })
      const table = make({ coalesce })
      const origin = latchedLoader<string>()
      const waiter = table.fetch('k', origin.loader)
      await settle()
      await send({ id: 'k', version: 3 })
      expect(table.stats()).toMatchObject({ coh_applied: 1, size: 1 }) // today, coalescing on: size 0
      await send({ id: 'k', version: 2, kind: 'put' })
      expect(table.stats()).toMatchObject({ coh_applied: 1, coh_stale: 1 }) // today, coalescing on: applied
      expect(await table.put('k', 'v2', { version: 2 })).toMatchObject({ applied: false })
      origin.only().resolve('v0')
      expect(await waiter).toBe('v0')
      expect(table.stats()).toMatchObject({ fenced: 1, fills: 0 })
      await table.close()
    })
  }

  it('local put and invalidate always leave their row or tombstone, even for an id never read', async () => {
    const { make, send } = world({ l2: false })
    const table = make()
    expect(await table.invalidate('i', { version: 5 })).toMatchObject({ applied: true })
    expect(await table.put('p', 'p5', { version: 5 })).toMatchObject({ applied: true })
    expect(table.stats().size).toBe(2)
    await send({ id: 'i', version: 4, kind: 'put' })
    await send({ id: 'p', version: 4 })
    expect(table.stats()).toMatchObject({ coh_applied: 0, coh_stale: 2, size: 2 })
    expect(await table.fetch('p', () => 'x')).toBe('p5')
    await table.close()
  })
})

describe('versions without `version`', () => {
  it('come from L2’s per-id counter: monotonic across two tables sharing the store', async () => {
    const { l2, make } = world()
    const [a, b] = [make(), make()]
    const versions: number[] = []
    versions.push((await a.put('k', 'a1')).version)
    versions.push((await b.invalidate('k')).version)
    versions.push((await b.put('k', 'b1')).version)
    versions.push((await a.invalidate('k')).version)
    versions.push((await a.put('k', 'a2')).version)
    expect(versions).toEqual([1, 2, 3, 4, 5])
    expect(await l2.get(NAME, 'k')).toMatchObject({ kind: 'value', value: 'a2', version: 5 })
    // Each change was newer than what the other table held: all applied, none stale.
    expect(a.stats()).toMatchObject({ coh_applied: 2, coh_stale: 0 })
    expect(b.stats()).toMatchObject({ coh_applied: 3, coh_stale: 0 })
    expect(await b.fetch('k', () => 'x')).toBe('a2')
    // Another id has its own counter.
    expect((await a.put('other', 'o')).version).toBe(1)
    await Promise.all([a.close(), b.close()])
  })

  it('start above the version of the L2 entry, even one written with an explicit version', async () => {
    const { make } = world({ bus: false })
    const [a, b] = [make(), make()]
    await a.put('k', 'v41', { version: 41 })
    expect((await b.invalidate('k')).version).toBe(42)
    expect((await a.put('k', 'next')).version).toBe(43)
    await Promise.all([a.close(), b.close()])
  })

  it('without L2: the highest version the table knows + 1 (row, tombstone, loader report or flight)', async () => {
    const { make } = world({ l2: false, bus: false })
    const table = make()
    await table.put('k', 'v7', { version: 7 })
    expect(await table.put('k', 'next')).toMatchObject({ applied: true, version: 8, broadcast: false })
    expect(await table.invalidate('k')).toMatchObject({ applied: true, version: 9, broadcast: false })
    expect(await table.fetch('k', versioned('v20', 20))).toBe('v20')
    expect(await table.invalidate('k')).toMatchObject({ applied: true, version: 21, broadcast: false })
    // A joinable flight in progress holds its starting version (the tombstone's, 21).
    const origin = latchedLoader<string>()
    const waiter = table.fetch('k', origin.loader)
    await settle()
    expect(await table.put('k', 'during')).toMatchObject({ applied: true, version: 22, broadcast: false })
    origin.only().resolve('late')
    expect(await waiter).toBe('late')
    expect(await table.fetch('k', () => 'x')).toBe('during')
    await table.close()
  })

  // Was a bug (src/owner/owner.ts onPut/onInvalidate): without L2, a table that knew nothing of the
  // id assigned version 0, which every peer holding a row loaded without a reported version (also
  // version 0) dropped as stale. An unknown version now counts as 0: the first assigned version is 1.
  it('without L2: a table that knows nothing of the id still assigns a version its peers apply', async () => {
    const { make } = world({ l2: false })
    const [a, b] = [make(), make()]
    expect(await b.fetch('k', () => 'old')).toBe('old') // B's row: version 0 (the loader reported none)
    expect(await a.invalidate('k')).toMatchObject({ applied: true, version: 1, broadcast: true })
    expect(b.stats()).toMatchObject({ coh_applied: 1, coh_stale: 0 })
    expect(await b.fetch('k', () => 'new')).toBe('new')
    expect(await a.put('j', 'j1')).toMatchObject({ applied: true, version: 1, broadcast: true }) // a put too
    await Promise.all([a.close(), b.close()])
  })
})

describe('a loader reports its version through context.setVersion', () => {
  it('the row and the L2 entry carry it; bus messages below it are stale, from it up applied', async () => {
    const { l2, make, send } = world()
    const table = make()
    expect(await table.fetch('k', versioned('v42', 42))).toBe('v42')
    expect(await l2.get(NAME, 'k')).toMatchObject({ kind: 'value', value: 'v42', version: 42 })
    await send({ id: 'k', version: 40, kind: 'put' })
    await send({ id: 'k', version: 41 })
    expect(table.stats()).toMatchObject({ coh_applied: 0, coh_stale: 2 })
    expect(await table.fetch('k', () => 'x')).toBe('v42') // still held
    await send({ id: 'k', version: 42 }) // equal, from another origin: the row goes; L2 still holds v42
    expect(table.stats()).toMatchObject({ coh_applied: 1, coh_stale: 2 })
    expect(await table.fetch('k', () => 'x')).toBe('v42')
    expect(table.stats()).toMatchObject({ l2_hits: 1 })
    await send({ id: 'k', version: 43 })
    expect(table.stats()).toMatchObject({ coh_applied: 2, coh_stale: 2 })
    expect(await table.fetch('k', versioned('v43', 43))).toBe('v43')
    await table.close()
  })

  it('the last report wins; a bad report throws inside the loader, and the fetch rejects with it', async () => {
    const { l2, make } = world({ bus: false })
    const table = make()
    expect(
      await table.fetch('k', (_id, context) => {
        context.setVersion(3)
        context.setVersion(9)
        return 'v9'
      }),
    ).toBe('v9')
    expect(await l2.get(NAME, 'k')).toMatchObject({ version: 9 })
    for (const bad of [-1, 1.5, Number.NaN, Number.MAX_SAFE_INTEGER + 1, '7' as unknown as number]) {
      // A number out of range is a RangeError, anything else a TypeError.
      await expect(table.fetch(`bad-${String(bad)}`, (_id, context) => (context.setVersion(bad), 'x'))).rejects.toThrow(typeof bad === 'number' ? RangeError : TypeError)
    }
    await table.close()
  })

  // Was a bug (src/flight/flight.ts FlightContext): setVersion was a prototype method reading
  // `this.flight`, so `(id, { setVersion }) => setVersion(3)` threw and the fetch rejected.
  it('setVersion works when the loader destructures its context', async () => {
    const { l2, make } = world({ bus: false })
    const table = make()
    const loader = (_id: string | number, { setVersion, signal }: LoaderContext) => {
      expect(signal).toBeInstanceOf(AbortSignal)
      setVersion(3)
      return 'v3'
    }
    expect(await table.fetch('k', loader)).toBe('v3')
    expect(await l2.get(NAME, 'k')).toMatchObject({ version: 3 })
    // A detached setVersion still validates its argument.
    await expect(table.fetch('bad', (_id, { setVersion }) => (setVersion(-1), 'x'))).rejects.toThrow(RangeError)
    await table.close()
  })

  it('a flight that reports a version older than a change made meanwhile is not stored', async () => {
    const { make } = world({ l2: false, bus: false })
    const table = make({ coalesce: false }) // not joinable: only the versions keep it out
    const origin = latchedLoader<string>()
    const waiter = table.fetch('k', origin.loader)
    await settle()
    await table.invalidate('k', { version: 5 })
    const call = origin.only()
    call.context.setVersion(4)
    call.resolve('v4')
    expect(await waiter).toBe('v4')
    expect(table.stats()).toMatchObject({ fenced: 1, fills: 0 })
    expect(await table.fetch('k', versioned('v5', 5))).toBe('v5')
    await table.close()
  })
})

describe('a gap on the bus', () => {
  it('drops every L1 row (counted), fences running flights, and the table keeps serving through L2 and the loader', async () => {
    const { l2, clock } = world({ bus: false })
    const hand = manualBus()
    const table = createTable<string | undefined, Id>({ name: NAME, ttl: 10_000, jitter: 0, sweepInterval: 1e9, clock, l2, bus: hand.bus })
    const ids = ['a', 'b', 'c', 'd', 'e']
    for (const id of ids) await table.fetch(id, () => `${id}1`)
    await table.invalidate('gone', { version: 3 }) // a tombstone is a row too
    const origin = latchedLoader<string>()
    const running = table.fetch('f', origin.loader)
    await settle()
    expect(table.stats()).toMatchObject({ size: 6, inflight: 1 })

    const gaps: unknown[] = []
    table.events.on('gap', (event) => gaps.push(event))
    hand.deliver({ type: 'gap' })
    expect(table.stats()).toMatchObject({ coh_gaps: 1, coh_dropped: 6, size: 0 })
    expect(gaps).toEqual([{ table: NAME, dropped: 6 }])

    // The flight that ran across the gap answers its waiter but stores nothing, and is not joinable.
    const fresh = latchedLoader<string>()
    const after = table.fetch('f', fresh.loader)
    await settle()
    expect(fresh.calls).toHaveLength(1)
    origin.only().resolve('f-before')
    expect(await running).toBe('f-before')
    fresh.only().resolve('f-after')
    expect(await after).toBe('f-after')
    expect(table.stats().fenced).toBe(1)

    // Every dropped row is served again from L2, without the loader.
    let loads = 0
    for (const id of ids) expect(await table.fetch(id, () => (loads++, 'x'))).toBe(`${id}1`)
    expect(loads).toBe(0)
    expect(table.stats()).toMatchObject({ l2_hits: 5, size: 6 })
    // A second gap is counted again.
    hand.deliver({ type: 'gap' })
    expect(table.stats()).toMatchObject({ coh_gaps: 2, coh_dropped: 12, size: 0 })
    await table.close()
  })

  it('without L2 the loader serves again', async () => {
    const hand = manualBus()
    const table = createTable<string | undefined, Id>({ name: NAME, bus: hand.bus })
    await table.fetch('k', () => 'v1')
    hand.deliver({ type: 'gap' })
    expect(await table.fetch('k', () => 'v2')).toBe('v2')
    expect(table.stats()).toMatchObject({ coh_gaps: 1, coh_dropped: 1, loads: 2 })
    await table.close()
  })
})

describe('malformed deliveries and bus failures', () => {
  it('an `invalid` delivery is counted coh_invalid and never thrown', async () => {
    const hand = manualBus()
    const table = createTable<string | undefined, Id>({ name: NAME, bus: hand.bus })
    await table.fetch('k', () => 'v1')
    expect(() => hand.deliver({ type: 'invalid', reason: 'payload is not JSON' })).not.toThrow()
    expect(() => hand.deliver({ type: 'invalid', reason: 'version must be a finite number >= 0' })).not.toThrow()
    expect(table.stats()).toMatchObject({ coh_invalid: 2, coh_applied: 0, coh_stale: 0, size: 1 })
    expect(await table.fetch('k', () => 'x')).toBe('v1')
    await table.close()
  })

  it('malformed payloads on the local bus never reach the table: publish refuses them', async () => {
    const { bus, make } = world()
    const table = make()
    const bad = { table: NAME, id: 'k', version: -1, kind: 'put', origin: 'elsewhere' }
    await expect(bus.publish(bad as CoherenceMessage)).rejects.toThrow(TypeError)
    expect(table.stats()).toMatchObject({ coh_applied: 0, coh_stale: 0 })
    await table.close()
  })

  // Was a bug (src/table.ts #receive): the table trusted whatever a transport handed it (an object
  // id was applied, a NaN version counted stale, a null delivery threw into the transport). Every
  // delivery is now validated with parseCoherenceMessage, whatever the transport.
  it('a malformed message from a user transport is counted coh_invalid, never applied, never thrown', async () => {
    const hand = manualBus()
    const table = createTable<string | undefined, Id>({ name: NAME, bus: hand.bus })
    await table.fetch('k', () => 'v1')
    const message = { table: NAME, id: 'k', version: 9, kind: 'invalidate', origin: 'o' }
    const throwing = new Proxy(
      {},
      {
        get() {
          throw new Error('hostile getter')
        },
      },
    )
    const malformed: unknown[] = [
      { type: 'message', message: { ...message, id: {}, version: '9', kind: 'put' } },
      { type: 'message', message: { ...message, version: Number.NaN } },
      { type: 'message', message: { ...message, version: -1 } },
      { type: 'message', message: { ...message, version: Number.POSITIVE_INFINITY } },
      { type: 'message', message: { ...message, kind: 'delete' } },
      { type: 'message', message: { ...message, origin: '' } },
      { type: 'message', message: { ...message, table: 42 } },
      { type: 'message', message: JSON.parse(`{"table":"${NAME}","id":"k","version":9,"kind":"put","origin":"o","__proto__":{"x":1}}`) },
      { type: 'message', message: [NAME, 'k', 9, 'put', 'o'] },
      { type: 'message', message: null },
      { type: 'message', message: throwing },
      { type: 'message' },
      { type: 'something else', message },
      { type: 'gap ' },
      throwing,
      null,
      undefined,
      'message',
    ]
    for (const delivery of malformed) expect(() => hand.deliver(delivery)).not.toThrow()
    expect(table.stats()).toMatchObject({ coh_invalid: malformed.length, coh_applied: 0, coh_stale: 0, coh_gaps: 0, size: 1 })
    expect(await table.fetch('k', () => 'x')).toBe('v1') // the row is untouched
    // The same message, well formed, is applied.
    hand.deliver({ type: 'message', message })
    expect(table.stats()).toMatchObject({ coh_invalid: malformed.length, coh_applied: 1 })
    expect(await table.fetch('k', () => 'v9')).toBe('v9')
    await table.close()
  })

  it('a failing publish is counted bus_errors and reported; put and invalidate still resolve, L1 and L2 changed', async () => {
    const clock = manualClock(0)
    const l2 = memoryL2({ clock })
    const failure = new Error('bus down')
    const hand = manualBus(async () => {
      throw failure
    })
    const table = createTable<string | undefined, Id>({ name: NAME, clock, l2, bus: hand.bus })
    const errors: unknown[] = []
    table.events.on('error', (event) => errors.push(event))
    expect(await table.put('k', 'v1')).toMatchObject({ applied: true, version: 1, broadcast: false })
    expect(await table.invalidate('j')).toMatchObject({ applied: true, version: 1, broadcast: false })
    expect(table.stats().bus_errors).toBe(2)
    expect(errors).toEqual([
      { table: NAME, id: 'k', error: failure },
      { table: NAME, id: 'j', error: failure },
    ])
    expect(hand.published.map((m) => (m.kind === 'clear' || m.kind === 'tag' ? [m.kind] : [m.id, m.version, m.kind]))).toEqual([
      ['k', 1, 'put'],
      ['j', 1, 'invalidate'],
    ])
    expect(await table.fetch('k', () => 'x')).toBe('v1')
    expect(await l2.get(NAME, 'k')).toMatchObject({ value: 'v1', version: 1 })
    await table.close()
  })

  it('a publish that throws synchronously is counted the same way', async () => {
    const table = createTable<string | undefined, Id>({
      name: NAME,
      bus: {
        publish: () => {
          throw new Error('sync failure')
        },
        subscribe: () => () => {},
        close: async () => {},
      },
    })
    await expect(table.put('k', 'v', { version: 1 })).resolves.toMatchObject({ applied: true, version: 1, broadcast: false })
    expect(table.stats().bus_errors).toBe(1)
    await table.close()
  })

  it(`a publish that never settles is given up after PUBLISH_TIMEOUT (${PUBLISH_TIMEOUT} ms, table clock): broadcast false, counted bus_errors`, async () => {
    const clock = manualClock(0)
    const l2 = memoryL2({ clock })
    const hand = manualBus(() => new Promise<void>(() => {}))
    const table = createTable<string | undefined, Id>({ name: NAME, clock, l2, bus: hand.bus })
    const put = outcome(table.put('k', 'v1', { version: 1 }))
    await settle()
    expect(hand.published).toHaveLength(1)
    clock.advance(PUBLISH_TIMEOUT - 1)
    await settle()
    expect(put.state).toBe('pending')
    expect(table.stats().bus_errors).toBe(0)
    clock.advance(1)
    await settle()
    expect(put).toMatchObject({ state: 'fulfilled', value: { applied: true, version: 1, broadcast: false } })
    expect(table.stats().bus_errors).toBe(1)
    // The change itself was made: L1 and L2 hold it.
    expect(await table.fetch('k', () => 'x')).toBe('v1')
    expect(await l2.get(NAME, 'k')).toMatchObject({ value: 'v1', version: 1 })
    // invalidate is bounded the same way.
    const invalidate = outcome(table.invalidate('k', { version: 2 }))
    await settle()
    clock.advance(PUBLISH_TIMEOUT)
    await settle()
    expect(invalidate).toMatchObject({ state: 'fulfilled', value: { applied: true, version: 2, broadcast: false } })
    expect(table.stats().bus_errors).toBe(2)
    await table.close()
  })

  it('a publish that settles within PUBLISH_TIMEOUT is broadcast: true, and nothing is counted', async () => {
    const clock = manualClock(0)
    let release!: () => void
    const hand = manualBus(() => new Promise<void>((resolve) => (release = resolve)))
    const table = createTable<string | undefined, Id>({ name: NAME, clock, bus: hand.bus })
    const idle = clock.pending()
    const put = outcome(table.put('k', 'v1', { version: 1 }))
    await settle()
    expect(clock.pending()).toBe(idle + 1) // the publish bound
    clock.advance(PUBLISH_TIMEOUT - 1)
    release()
    await settle()
    expect(put).toMatchObject({ state: 'fulfilled', value: { applied: true, version: 1, broadcast: true } })
    clock.advance(10 * PUBLISH_TIMEOUT) // its timer was cleared: nothing happens later
    await settle()
    expect(table.stats().bus_errors).toBe(0)
    expect(clock.pending()).toBe(idle) // the bound was cleared
    await table.close()
  })

  it('without a bus nothing is broadcast (broadcast: false) and nothing is counted', async () => {
    const table = createTable<string | undefined, Id>({ name: NAME, clock: manualClock(0) })
    expect(await table.put('k', 'v1')).toMatchObject({ applied: true, version: 1, broadcast: false })
    expect(await table.invalidate('k')).toMatchObject({ applied: true, version: 2, broadcast: false })
    expect(table.stats().bus_errors).toBe(0)
    await table.close()
  })

  it('publishes the documented message: table, id, version, kind, origin', async () => {
    const hand = manualBus()
    const table = createTable<string | undefined, Id>({ name: NAME, bus: hand.bus })
    await table.put(7, 'seven', { version: 3 })
    await table.invalidate('7', { version: 4 })
    expect(hand.published).toEqual([
      { table: NAME, id: 7, version: 3, kind: 'put', origin: table.origin },
      { table: NAME, id: '7', version: 4, kind: 'invalidate', origin: table.origin },
    ])
    expect(table.origin).toMatch(new RegExp(`^${NAME}:`))
    await table.close()
  })
})

describe('answers that are not cacheable (negativeTtl 0)', () => {
  it('a put of undefined at a version > 0 leaves a tombstone at that version: older changes are refused, older messages stale', async () => {
    const { make, send } = world({ l2: false })
    const table = make({ negativeTtl: 0 })
    await table.put('k', 'v5', { version: 5 })
    expect(await table.put('k', undefined, { version: 6 })).toMatchObject({ applied: true, version: 6, broadcast: true })
    expect(table.stats().size).toBe(1) // the tombstone
    expect(await table.put('k', 'v5 again', { version: 5 })).toMatchObject({ applied: false })
    await send({ id: 'k', version: 5, kind: 'put' })
    expect(table.stats()).toMatchObject({ coh_applied: 0, coh_stale: 1 })
    expect(await table.fetch('k', () => 'loaded')).toBe('loaded') // not a hit: the tombstone holds no value
    await table.close()
  })

  it('a fill of undefined reported at a version > 0 leaves a tombstone; one at version 0 leaves no row', async () => {
    const { make, send } = world({ l2: false })
    const table = make({ negativeTtl: 0 })
    await table.fetch('k', () => 'v0') // a row at version 0
    await send({ id: 'k', version: 2 }) // a tombstone at 2
    expect(await table.fetch('k', (_id, context) => (context.setVersion(7), undefined))).toBeUndefined()
    expect(table.stats()).toMatchObject({ size: 1, fills: 1 }) // the tombstone at 7 replaced the one at 2
    await send({ id: 'k', version: 6 })
    expect(table.stats()).toMatchObject({ coh_applied: 1, coh_stale: 1 })
    expect(await table.put('k', 'v6', { version: 6 })).toMatchObject({ applied: false })

    expect(await table.fetch('j', () => 'j0')).toBe('j0')
    expect(table.stats().size).toBe(2)
    expect(await table.invalidate('j', { version: 0 })).toMatchObject({ applied: true }) // a row (a tombstone at 0) that is no hit
    expect(await table.fetch('j', () => undefined)).toBeUndefined() // not cacheable, version 0: the row goes
    expect(table.stats().size).toBe(1)
    let loads = 0
    expect(await table.fetch('j', () => (loads++, undefined))).toBeUndefined() // nothing cached: it loads again
    expect(loads).toBe(1)
    await table.close()
  })
})

describe('closing', () => {
  it('close() emits no error event: the owner ignores xstate’s own lifecycle events', async () => {
    const { make } = world()
    const table = make()
    const errors: unknown[] = []
    table.events.on('error', (event) => errors.push(event))
    await table.fetch('k', () => 'v1')
    await table.put('k', 'v2')
    const origin = latchedLoader<string>()
    const running = table.fetch('j', origin.loader)
    await settle()
    const closed = table.close() // stops once the flight in progress has answered
    origin.only().resolve('j1')
    expect(await running).toBe('j1')
    await closed
    await settle()
    expect(errors).toEqual([])
    expect(table.stats()).toMatchObject({ load_errors: 0, inflight: 0 })
  })
})

describe('who listens', () => {
  it('a table ignores the messages it published itself', async () => {
    const { make } = world()
    const table = make()
    await table.put('k', 'v1', { version: 1 })
    await table.invalidate('j', { version: 1 })
    expect(table.stats()).toMatchObject({ coh_applied: 0, coh_stale: 0 })
    expect(await table.fetch('k', () => 'x')).toBe('v1') // its own put was not undone by its own message
    expect(table.stats().hits).toBe(1)
    await table.close()
  })

  it('a raw message carrying the table’s own origin is ignored; the same message from another origin applies', async () => {
    const { make, send } = world()
    const table = make()
    await table.fetch('k', () => 'v1')
    await send({ id: 'k', version: 5, origin: table.origin })
    expect(table.stats()).toMatchObject({ coh_applied: 0, coh_stale: 0, size: 1 })
    await send({ id: 'k', version: 5 })
    expect(table.stats()).toMatchObject({ coh_applied: 1, coh_stale: 0 })
    await table.close()
  })

  it('messages for another table name are ignored, even for the same id', async () => {
    const { make } = world()
    const table = make()
    const other = make({ name: 'orders' })
    await table.fetch('k', () => 'v1')
    await other.put('k', 'order', { version: 9 })
    await other.invalidate('k', { version: 10 })
    expect(table.stats()).toMatchObject({ coh_applied: 0, coh_stale: 0 })
    expect(await table.fetch('k', () => 'x')).toBe('v1')
    await Promise.all([table.close(), other.close()])
  })

  it('two tables of one name in one process hear each other; a third of another name hears neither', async () => {
    const { make } = world()
    const [a, b, c] = [make(), make(), make({ name: 'orders' })]
    await a.put('k', 'from a', { version: 1 })
    await b.put('k', 'from b', { version: 2 })
    expect(a.stats()).toMatchObject({ coh_applied: 1 })
    expect(b.stats()).toMatchObject({ coh_applied: 1 })
    expect(c.stats()).toMatchObject({ coh_applied: 0, coh_stale: 0 })
    expect(await a.fetch('k', () => 'x')).toBe('from b')
    await Promise.all([a.close(), b.close(), c.close()])
  })

  it('close() unsubscribes: no coherence is counted after it, and the bus stays usable for the others', async () => {
    const { make, bus } = world()
    const [a, b, c] = [make(), make(), make()]
    await a.put('k', 'v1', { version: 1 })
    expect(b.stats().coh_applied).toBe(1)
    await b.close()
    await a.put('k', 'v2', { version: 2 })
    await a.invalidate('k', { version: 3 })
    expect(b.stats()).toMatchObject({ coh_applied: 1, coh_stale: 0, coh_invalid: 0 })
    expect(c.stats()).toMatchObject({ coh_applied: 3 })
    await bus.publish({ table: NAME, id: 'k', version: 4, kind: 'put', origin: 'elsewhere' })
    expect(b.stats().coh_applied).toBe(1)
    await Promise.all([a.close(), c.close()])
  })

  it('close() on a table with a hand-driven bus removes its handler', async () => {
    const hand = manualBus()
    const table = createTable<string | undefined, Id>({ name: NAME, bus: hand.bus })
    expect(hand.subscribers()).toBe(1)
    await table.close()
    expect(hand.subscribers()).toBe(0)
  })
})
