/**
 * Tag versions are kept only while they can change an answer: once no row or flight born before a
 * tag's version remains, the version goes, and one number (the highest version forgotten) stands for
 * all of them. So the memory of tags stays bounded by the rows held, whatever the number of distinct
 * tags invalidated over a process's life; and forgetting changes no answer a process gives.
 */
import mitt from 'mitt'
import { describe, expect, it } from 'vitest'
import { type Id, type LoaderContext, type Table, createTable, localBus, memoryL2 } from '../src/index.js'
import type { Bus, BusDelivery, L2Store } from '../src/store.js'
import { manualClock } from '../src/testing.js'
import { onSweep } from '../src/owner/on-sweep.js'
import { type OwnerEnv, type Turn, initialState } from '../src/owner/state.js'
import { advanceSettled, latchedLoader, settle } from './support/latch.js'
import { failingTagInvalidations } from './support/failing-tag-invalidations.js'

const SWEEP = 100

/** An owner's state and a turn over it that runs the sweeper's passes (one every {@link SWEEP} ms), no actor. */
function owner(l2EntryLife = 0) {
  const clock = manualClock(0)
  const state = initialState<string>(100_000, 0, true, clock, () => {})
  const env = { name: 'tags', clock, sweepInterval: SWEEP, sweepPeriod: SWEEP, l2EntryLife, sweeper: { continueSoon() {} }, events: mitt() } as unknown as OwnerEnv<string>
  const turn: Turn<string> = { state, env, defer: (effect: () => void) => effect() } as unknown as Turn<string>
  /** Moves the clock to `at` and runs a whole sweep pass there. */
  const passAt = (at: number) => {
    clock.set(at)
    onSweep(turn, true)
    while (state.sweep !== undefined) onSweep(turn, false)
  }
  /** Invalidates `tag` at the floor of now, as the owner takes a tag's new version (the version clock notes it). */
  const invalidate = (tag: string, taken = false) => {
    const version = state.versions.floor(clock.now())
    state.versions.observe(version)
    state.tags.raise(tag, version, taken)
  }
  /** A row `id` carrying the tag `tag`, born now, expiring at `expiresAt`; then the tag invalidated. */
  const rowThenInvalidate = (id: string, tag: string, expiresAt: number) => {
    state.rows.write(id, id, expiresAt, 0, state.rows.find(id), { keys: [tag], born: state.versions.tick(clock.now()) })
    invalidate(tag)
  }
  return { clock, state, passAt, invalidate, rowThenInvalidate }
}

describe('tag versions are forgotten once nothing born before them remains', () => {
  it('one tag per row, each invalidated: the map of tag versions is empty once the rows were swept', () => {
    const { state, passAt, rowThenInvalidate } = owner()
    for (let i = 0; i < 10_000; i++) rowThenInvalidate(`user:${i}`, `user:${i}`, 1_000)
    expect(state.tags.size).toBe(10_000)
    passAt(1_500) // reclaims the rows (stale, and expired); their tags' versions are still held as it starts
    expect(state.rows.size).toBe(0)
    passAt(1_600)
    expect(state.tags.size).toBe(0)
    // No row born before what was forgotten is held, nor born again: a row's check no longer needs it.
    // An L2 entry born before it is stale (L2 may not hold the invalidation); one born now is fresh.
    expect(state.tags.stale(['user:7'], 1)).toBe(false)
    expect(state.tags.staleInL2(['user:7'], 1)).toBe(true)
    expect(state.tags.staleInL2(['user:7'], state.versions.tick(1_600))).toBe(false)
  })

  it('keeps the versions at or above the earliest birth of a tagged row held', () => {
    const { clock, state, passAt, invalidate, rowThenInvalidate } = owner()
    rowThenInvalidate('old', 'a', 1_000)
    clock.set(10)
    state.rows.write('kept', 'kept', 1e9, 0, -1, { keys: ['k'], born: state.versions.tick(10) })
    clock.set(20)
    rowThenInvalidate('new', 'b', 1_000)
    invalidate('c') // a tag no row carries
    passAt(2_000)
    passAt(2_100)
    // `a` was invalidated before `kept` was born: forgotten. `b` and `c` after it: kept, as `kept` is fresh.
    expect(state.tags.size).toBe(2)
    expect(state.rows.live('kept', clock)).toBe('kept')
    state.rows.delete('kept')
    passAt(2_200)
    expect(state.tags.size).toBe(0)
  })

  it('with an L2, keeps the versions younger than an L2 entry of the table lives, rows or not', () => {
    const { clock, state, passAt, rowThenInvalidate } = owner(5_000)
    rowThenInvalidate('a', 'a', 1_000)
    clock.set(3_000)
    rowThenInvalidate('b', 'b', 4_000)
    passAt(4_500) // both rows are stale, and swept
    passAt(4_600)
    expect(state.rows.size).toBe(0)
    expect(state.tags.size).toBe(2) // both under 5 s old
    passAt(5_200)
    expect(state.tags.size).toBe(1) // `a`'s is over 5 s old: no entry of the table's lifetimes born before it is left in L2
    passAt(8_200)
    expect(state.tags.size).toBe(0)
  })

  it('with an L2, forgets a version L2 took with the rows, and it makes no L2 entry born before it stale', () => {
    const { clock, state, passAt, invalidate } = owner(5_000)
    clock.set(10)
    invalidate('taken', true)
    invalidate('missed')
    passAt(1_000) // no row is held: the version L2 took goes, the one it may not hold stays an entry's life
    expect(state.tags.size).toBe(1)
    expect(state.tags.staleInL2(['taken'], 1)).toBe(false) // the facade reads L2's own version of it
    expect(state.tags.staleInL2(['other'], 1)).toBe(false)
    expect(state.tags.staleInL2(['missed'], 1)).toBe(true)
    passAt(5_100)
    expect(state.tags.size).toBe(0)
    expect(state.tags.staleInL2(['other'], 1)).toBe(true) // it may have carried the tag L2 missed: reloaded, never answered stale
  })
})

describe('forgetting tag versions changes no answer', () => {
  /** A loader answering `value` with `tags`. */
  const tagged = (value: string, tags: string[]) => async (_id: Id, context: LoaderContext) => (context.setTags(tags), value)

  it('a fresh row of another tag is still a hit after the versions before it were forgotten', async () => {
    const clock = manualClock(0)
    const table = createTable<string>({ name: 'tags', ttl: 1_000, jitter: 0, sweepInterval: SWEEP, clock })
    for (let i = 0; i < 50; i++) {
      await table.fetch(`user:${i}`, tagged(`u${i}`, [`user:${i}`]))
      await table.invalidateTags([`user:${i}`])
    }
    await advanceSettled(clock, 600)
    expect(await table.fetch('kept', tagged('kept', ['other']))).toBe('kept')
    await advanceSettled(clock, 800) // the first rows were swept (stale, then expired); `kept` lives until 1,600
    expect(table.stats()).toMatchObject({ swept: 50 })
    expect(await table.fetch('kept', tagged('reloaded', ['other']))).toBe('kept') // a hit
    await table.close()
  })

  it('a flight in progress keeps the versions after its birth: its answer is stored when it lands after a sweep pass', async () => {
    const clock = manualClock(0)
    const table = createTable<string>({ name: 'tags', ttl: 60_000, jitter: 0, sweepInterval: SWEEP, clock })
    const origin = latchedLoader<string>()
    const read = table.fetch('f', origin.loader)
    await settle()
    await advanceSettled(clock, 10)
    await table.namespace('n').invalidateTags(['z']) // after the flight's birth; no flight of the namespace runs
    await advanceSettled(clock, 8_000) // sweep passes start: no row is held, the flight is
    origin.only().context.setTags(['y'])
    origin.only().resolve('loaded')
    expect(await read).toBe('loaded')
    expect(await table.fetch('f', async () => 'loaded again')).toBe('loaded') // a hit: the answer was stored
    expect(table.stats()).toMatchObject({ loads: 1, fenced: 0 })
    await table.close()
  })

  /** Two processes on one memoryL2 and one localBus, their table's entries living `ttl` ms. */
  function processes(ttl: number) {
    const clock = manualClock(0)
    const l2 = memoryL2({ clock })
    const bus = localBus()
    const make = (): Table<string> => createTable<string>({ name: 'tags', ttl, jitter: 0, sweepInterval: SWEEP, clock, l2, bus })
    return { clock, l2, writer: make(), reader: make() }
  }

  it('an L2 entry whose tags were never invalidated answers from L2 in a process that forgot the version of another tag it invalidated', async () => {
    const { clock, writer, reader } = processes(1_000)
    // Its loader gives it a minute: it outlives the table's ttl in L2, and the reader forgets meanwhile.
    await writer.fetch('a', async (_id, context) => (context.setTags(['kept']), context.setTtl(60_000), 'v1'))
    await advanceSettled(clock, 10)
    expect(await reader.invalidateTags(['unrelated'])).toMatchObject({ l2: 'written' })
    await settle()
    await advanceSettled(clock, 8_000) // sweep passes in the reader: it holds no tagged row, and an entry of the table's lifetimes is gone
    let loads = 0
    expect(await reader.fetch('a', async () => (loads++, 'v2'))).toBe('v1')
    expect(loads).toBe(0)
    expect(reader.stats()).toMatchObject({ l2_hits: 1, tag_stale: 0 })
    await Promise.all([writer.close(), reader.close()])
  })

  it("a namespace's L2 entry answers from L2 in a process that forgot the version of another namespace's clear()", async () => {
    const { clock, writer, reader } = processes(1_000)
    await writer.namespace('acme').fetch('a', async (_id, context) => (context.setTtl(60_000), 'v1'))
    await advanceSettled(clock, 10)
    expect(await reader.namespace('globex').clear()).toMatchObject({ l2: 'cleared' })
    await settle()
    await advanceSettled(clock, 8_000)
    let loads = 0
    expect(await reader.namespace('acme').fetch('a', async () => (loads++, 'v2'))).toBe('v1')
    expect(loads).toBe(0)
    await Promise.all([writer.close(), reader.close()])
  })

  it("an L2 entry of the table's lifetimes answers from L2 in a process that forgot nothing yet (another tag invalidated, another namespace cleared)", async () => {
    const { clock, writer, reader } = processes(600_000)
    await writer.fetch('a', tagged('v1', ['kept']))
    await writer.namespace('acme').fetch('a', async () => 'v1')
    await advanceSettled(clock, 10)
    await reader.invalidateTags(['unrelated'])
    await reader.namespace('globex').clear()
    await settle()
    await advanceSettled(clock, 8_000)
    let loads = 0
    expect(await reader.fetch('a', async () => (loads++, 'v2'))).toBe('v1')
    expect(await reader.namespace('acme').fetch('a', async () => (loads++, 'v2'))).toBe('v1')
    expect(loads).toBe(0)
    await Promise.all([writer.close(), reader.close()])
  })

  /** A writer, a reader and another process on one memoryL2 (named by `keySpace`, as a redisL2 is by its prefix, when given) and one localBus; the table's entries live 1 s. */
  function threeProcesses(keySpace: string | undefined) {
    const clock = manualClock(0)
    const inner = memoryL2({ clock })
    const l2: L2Store = {
      ...inner,
      keySpace,
      get: inner.get.bind(inner),
      getMany: inner.getMany!.bind(inner),
      set: inner.set.bind(inner),
      nextVersion: inner.nextVersion.bind(inner),
      clear: inner.clear.bind(inner),
      tagVersions: inner.tagVersions!.bind(inner),
      invalidateTags: inner.invalidateTags!.bind(inner),
      close: inner.close.bind(inner),
    }
    const bus = localBus()
    const make = (): Table<string> => createTable<string>({ name: 'tags', ttl: 1_000, jitter: 0, sweepInterval: SWEEP, clock, l2, bus })
    return { clock, writer: make(), reader: make(), other: make() }
  }

  it('an L2 entry answers from L2 in a process that forgot invalidations of other tags it heard on the bus, which L2 took (one key space)', async () => {
    const { clock, writer, reader, other } = threeProcesses('shop:')
    await writer.fetch('a', async (_id, context) => (context.setTags(['kept']), context.setTtl(60_000), 'v1'))
    await advanceSettled(clock, 10)
    expect(await other.invalidateTags(['unrelated'])).toMatchObject({ l2: 'written', broadcast: true })
    await other.namespace('globex').clear()
    await settle()
    await advanceSettled(clock, 8_000) // the reader forgets what it heard: L2 holds it
    let loads = 0
    expect(await reader.fetch('a', async () => (loads++, 'v2'))).toBe('v1')
    expect(loads).toBe(0)
    expect(reader.stats()).toMatchObject({ l2_hits: 1, tag_stale: 0, tag_invalidations: 2 })
    await Promise.all([writer.close(), reader.close(), other.close()])
  })

  it('an invalidation heard from a table whose L2 names no key space counts as one L2 may not hold: an older entry of a longer lifetime of its own is reloaded once, never answered stale', async () => {
    const { clock, writer, reader, other } = threeProcesses(undefined)
    await writer.fetch('a', async (_id, context) => (context.setTags(['kept']), context.setTtl(60_000), 'v1'))
    await advanceSettled(clock, 10)
    await other.invalidateTags(['unrelated'])
    await settle()
    await advanceSettled(clock, 8_000)
    let loads = 0
    expect(await reader.fetch('a', async (_id, context) => (loads++, context.setTags(['kept']), 'v2'))).toBe('v2')
    expect(reader.stats()).toMatchObject({ tag_stale: 1 })
    expect(loads).toBe(1)
    await Promise.all([writer.close(), reader.close(), other.close()])
  })

  it('a tagged L2 entry born 0 is reloaded, never filled: no row is born 0, which would keep every tag version', async () => {
    const { clock, l2, writer } = processes(60_000)
    await writer.fetch('a', tagged('v1', ['t']))
    // A store that loses the birth (one of the user's own; an entry without one is refused as a bad answer).
    const unborn: L2Store = {
      ...l2,
      get: async (table, id) => {
        const entry = await l2.get(table, id)
        return entry === undefined ? undefined : { ...entry, born: 0 }
      },
      getMany: undefined,
      set: l2.set.bind(l2),
      nextVersion: l2.nextVersion.bind(l2),
      clear: l2.clear.bind(l2),
      tagVersions: l2.tagVersions!.bind(l2),
      invalidateTags: l2.invalidateTags!.bind(l2),
      close: async () => {},
    }
    const reader = createTable<string>({ name: 'tags', ttl: 60_000, jitter: 0, sweepInterval: SWEEP, clock, l2: unborn })
    let loads = 0
    const fresh = async (_id: Id, context: LoaderContext) => (loads++, context.setTags(['t']), 'v2')
    expect(await reader.fetch('a', fresh)).toBe('v2')
    expect(reader.stats()).toMatchObject({ tag_stale: 1 })
    expect(await reader.fetch('a', fresh)).toBe('v2') // the reload's row, born now, answers
    expect(loads).toBe(1)
    await Promise.all([writer.close(), reader.close()])
  })

  it('an L2 entry of a lifetime of its own, loaded before an invalidation L2 did not take, stays hidden once this process forgot that version', async () => {
    const clock = manualClock(0)
    const l2 = failingTagInvalidations(memoryL2({ clock }))
    const bus = localBus()
    const make = (): Table<string> => createTable<string>({ name: 'tags', ttl: 1_000, jitter: 0, sweepInterval: SWEEP, clock, l2, bus })
    const here = make()
    const there = make()
    // Its loader gives it a minute: it outlives the table's ttl in L2.
    await here.fetch('a', async (_id, context) => (context.setTags(['t']), context.setTtl(60_000), 'v1'))
    expect(await here.invalidateTags(['t'])).toMatchObject({ l2: 'failed' })
    await settle()
    // `there` holds no row: once the version is older than an entry of the table's lifetimes lives, it goes.
    await advanceSettled(clock, 3_000)
    expect(await there.fetch('a', tagged('v2', ['t']))).toBe('v2')
    await Promise.all([here.close(), there.close()])
  })

  it('a gap on the bus keeps the versions: an L2 entry older than an invalidation L2 did not take stays hidden after it', async () => {
    const clock = manualClock(0)
    const l2 = failingTagInvalidations(memoryL2({ clock }))
    const handlers = new Set<(delivery: BusDelivery) => void>()
    const bus: Bus = { publish: async () => {}, subscribe: (handler) => (handlers.add(handler), () => void handlers.delete(handler)), close: async () => handlers.clear() }
    const table = createTable<string>({ name: 'tags', ttl: 60_000, jitter: 0, sweepInterval: SWEEP, clock, l2, bus })
    await table.fetch('a', tagged('v1', ['t']))
    expect(await table.invalidateTags(['t'])).toMatchObject({ l2: 'failed' })
    for (const handler of handlers) handler({ type: 'gap' })
    expect(table.stats()).toMatchObject({ coh_gaps: 1, size: 0 })
    expect(await table.fetch('a', tagged('v2', ['t']))).toBe('v2')
    await table.close()
  })
})
