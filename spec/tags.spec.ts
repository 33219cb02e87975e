/**
 * Tags: a row's tags come from its loader's `setTags`, a batch loader's `setTags(id, tags)` or a
 * put's `tags`; `invalidateTags(tags)` makes every row carrying one of them stale at once. A stale
 * row answers no hit, no graced value (fail-safe, stale-while-revalidate, soft timeout), and
 * `peek`/`has` do not see it; a tagged L2 entry older than one of its tags is a miss in every
 * process; a flight in progress is fenced; the other table on the bus drops its row when the tag
 * arrives; the sweeper reclaims stale rows. Two tables on one memoryL2 and one localBus stand in for
 * two processes.
 */
import { describe, expect, it } from 'vitest'
import { type Id, type LoaderContext, type Table, type TableOptions, createTable, localBus, memoryL2 } from '../src/index.js'
import type { L2Store, L2Write } from '../src/store.js'
import { manualClock } from '../src/testing.js'
import { MAX_ID_LENGTH } from '../src/core/id.js'
import { advanceSettled, latchedBatchLoader, latchedLoader, outcome, settle } from './support/latch.js'
import { failingTagInvalidations } from './support/failing-tag-invalidations.js'

const TTL = 60_000

/** A loader answering `value` for any id, with `tags`. */
function tagged<V>(value: V, tags: string[]) {
  let calls = 0
  const loader = async (_id: Id, context: LoaderContext): Promise<V> => {
    calls++
    context.setTags(tags)
    return value
  }
  return { loader, calls: () => calls }
}

/** One table on a manual clock, no L2 nor bus. */
function alone(options: Partial<TableOptions<string | undefined, Id>> = {}) {
  const clock = manualClock(0)
  const table = createTable<string | undefined, Id>({ name: 'tags', ttl: TTL, jitter: 0, sweepInterval: 1e9, clock, ...options })
  return { clock, table }
}

/** Two tables ("processes") sharing one memoryL2 and one localBus on one manual clock. */
function twoProcesses(options: Partial<TableOptions<string | undefined>> = {}) {
  const clock = manualClock(0)
  const l2 = memoryL2({ clock })
  const bus = localBus()
  const make = (): Table<string | undefined> => createTable<string | undefined>({ name: 'tags', ttl: TTL, jitter: 0, sweepInterval: 1e9, clock, l2, bus, ...options })
  return { clock, l2, bus, make, here: make(), there: make() }
}

describe('invalidateTags in one table', () => {
  it('makes a tagged row answer no hit, and peek and has no longer see it; the next fetch loads', async () => {
    const { table } = alone()
    const first = tagged('v1', ['depot:7'])
    expect(await table.fetch('a', first.loader)).toBe('v1')
    expect(await table.fetch('a', first.loader)).toBe('v1') // a hit
    expect([table.peek('a'), table.has('a')]).toEqual(['v1', true])
    const result = await table.invalidateTags(['depot:7'])
    expect(result).toMatchObject({ applied: true, l2: 'none', broadcast: false })
    expect([table.peek('a'), table.has('a')]).toEqual([undefined, false])
    const second = tagged('v2', ['depot:7'])
    expect(await table.fetch('a', second.loader)).toBe('v2')
    expect(second.calls()).toBe(1)
    expect(await table.fetch('a', second.loader)).toBe('v2') // the new row is fresh
    expect(table.stats()).toMatchObject({ hits: 2, misses: 2, loads: 2, tag_invalidations: 1, tag_stale: 1 })
    await table.close()
  })

  it('leaves untagged rows and rows of other tags alone, and a row with several tags goes with any of them', async () => {
    const { table } = alone()
    await table.fetch('t', tagged('t', ['t']).loader)
    await table.fetch('u', tagged('u', ['u']).loader)
    await table.fetch('both', tagged('both', ['u', 't']).loader)
    await table.fetch('plain', async () => 'plain')
    await table.put('put', 'put', { tags: ['u'] })
    await table.invalidateTags(['t'])
    expect(['t', 'u', 'both', 'plain', 'put'].map((id) => table.has(id))).toEqual([false, true, false, true, true])
    await table.invalidateTags(['u'])
    expect(['u', 'plain', 'put'].map((id) => table.has(id))).toEqual([false, true, false])
    expect(table.stats()).toMatchObject({ tag_invalidations: 2, tag_stale: 0 })
    await table.close()
  })

  it('counts each tag of a call in tag_invalidations (repeats once), and each read that found a stale row in tag_stale', async () => {
    const { table } = alone()
    await table.fetch('a', tagged('a', ['x']).loader)
    await table.invalidateTags(['x', 'y', 'x', 'z'])
    expect(table.stats()).toMatchObject({ tag_invalidations: 3, tag_stale: 0 })
    expect(table.peek('a')).toBeUndefined() // peek counts nothing
    await table.fetch('a', tagged('a2', ['x']).loader)
    expect(table.stats()).toMatchObject({ tag_stale: 1 })
    await table.fetch('missing', async () => 'm') // a miss without a row is no tag_stale
    expect(table.stats()).toMatchObject({ tag_invalidations: 3, tag_stale: 1 })
    await table.close()
  })

  it('tags a put: a row put with tags goes stale, and one put after the invalidation is fresh', async () => {
    const { table } = alone()
    await table.put('a', 'old', { tags: ['t'] })
    expect(table.peek('a')).toBe('old')
    await table.invalidateTags(['t'])
    expect(table.has('a')).toBe(false)
    await table.put('a', 'new', { tags: ['t'] })
    expect(table.peek('a')).toBe('new')
    await table.close()
  })

  it('tags each id of a batch loader by its own setTags', async () => {
    const origin = latchedBatchLoader<string>()
    const { table } = alone({ batchLoader: origin.loader })
    const read = outcome(table.getMany(['a', 'b', 'c']))
    await settle()
    const call = origin.only()
    call.context.setTags('a', ['t'])
    call.context.setTags('b', ['u'])
    call.resolve(['A', 'B', 'C'])
    await settle()
    expect(read.value).toEqual(['A', 'B', 'C'])
    await table.invalidateTags(['t'])
    expect(['a', 'b', 'c'].map((id) => table.has(id))).toEqual([false, true, true])
    await table.close()
  })

  it('lets the sweeper reclaim tag-stale rows before they expire', async () => {
    const { clock, table } = alone({ sweepInterval: 1_000 })
    for (const id of ['a', 'b', 'c']) await table.fetch(id, tagged(id, ['t']).loader)
    await table.fetch('plain', async () => 'plain')
    await table.invalidateTags(['t'])
    expect(table.stats()).toMatchObject({ size: 4, swept: 0 })
    await advanceSettled(clock, 1_500)
    expect(table.stats()).toMatchObject({ size: 1, swept: 3 })
    expect(table.peek('plain')).toBe('plain')
    await table.close()
  })
})

describe('tags given as a readonly array', () => {
  it('are taken by setTags, a batch loader’s setTags, put and invalidateTags, as the types say (a constant list of tags, `as const`)', async () => {
    const DEPOT = ['depot:1'] as const
    const table = createTable<string>({ clock: manualClock(0), sweepInterval: 1e9 })
    expect(await table.fetch('a', (_id, context) => (context.setTags(DEPOT), 'a'))).toBe('a')
    expect(await table.fetchMany(['b'], (ids, context) => ids.map((id) => (context.setTags(id, DEPOT), String(id))))).toEqual(['b'])
    expect(await table.put('c', 'c', { tags: DEPOT })).toMatchObject({ applied: true })
    expect(await table.invalidateTags(DEPOT)).toMatchObject({ applied: true })
    expect([table.has('a'), table.has('b'), table.has('c')]).toEqual([false, false, false])
    await table.close()
  })
})

describe('a tag-stale row is no graced value', () => {
  const GRACE = 10_000
  const SHORT = 1_000

  it('under the fail-safe: a failing origin gets its error, not the stale row (a row of another tag is graced)', async () => {
    const { clock, table } = alone({ ttl: SHORT, grace: GRACE })
    await table.fetch('stale', tagged('s1', ['t']).loader)
    await table.fetch('kept', tagged('k1', ['u']).loader)
    clock.set(SHORT + 100)
    await table.invalidateTags(['t'])
    const down = async (): Promise<string> => {
      throw new Error('origin down')
    }
    await expect(table.fetch('stale', down)).rejects.toThrow('origin down')
    expect(await table.fetch('kept', down)).toBe('k1') // the fail-safe answers the graced value
    await table.close()
  })

  it('under stale-while-revalidate: the fetch waits for the load instead of answering the stale row', async () => {
    const { clock, table } = alone({ ttl: SHORT, grace: GRACE, staleWhileRevalidate: true })
    await table.fetch('stale', tagged('s1', ['t']).loader)
    await table.fetch('kept', tagged('k1', ['u']).loader)
    clock.set(SHORT + 100)
    await table.invalidateTags(['t'])
    const origin = latchedLoader<string>()
    expect(await table.fetch('kept', origin.loader)).toBe('k1') // answered at once, refreshing behind
    const stale = outcome(table.fetch('stale', origin.loader))
    await settle()
    expect(stale.state).toBe('pending')
    expect(origin.calls.map((call) => call.id).sort()).toEqual(['kept', 'stale'])
    for (const call of origin.calls) call.resolve(`${String(call.id)}2`)
    await settle()
    expect(stale.value).toBe('stale2')
    await table.close()
  })

  it('under a soft timeout: the caller waits past it for the load (a row of another tag answers at the soft timeout)', async () => {
    const { clock, table } = alone({ ttl: SHORT, grace: GRACE, softTimeout: 50 })
    await table.fetch('stale', tagged('s1', ['t']).loader)
    await table.fetch('kept', tagged('k1', ['u']).loader)
    clock.set(SHORT + 100)
    await table.invalidateTags(['t'])
    const origin = latchedLoader<string>()
    const stale = outcome(table.fetch('stale', origin.loader))
    const kept = outcome(table.fetch('kept', origin.loader))
    await settle() // the flights start, and arm their soft timeouts
    await advanceSettled(clock, 100)
    expect(kept.value).toBe('k1')
    expect(stale.state).toBe('pending')
    for (const call of origin.calls) call.resolve(`${String(call.id)}2`)
    await settle()
    expect(stale.value).toBe('stale2')
    await table.close()
  })
})

describe('invalidateTags with a flight in progress', () => {
  it('fences it: its waiters get its answer, it is not stored, and a fetch started after invalidateTags resolved starts a flight of its own', async () => {
    const { table } = alone()
    const origin = latchedLoader<string>()
    const early = outcome(table.fetch('a', origin.loader))
    const joined = outcome(table.fetch('a', origin.loader))
    await settle()
    const before = origin.only()
    before.context.setTags(['t'])
    await table.invalidateTags(['t'])
    const late = outcome(table.fetch('a', origin.loader))
    await settle()
    expect(origin.calls).toHaveLength(2) // the late fetch did not join the fenced flight
    before.resolve('before')
    await settle()
    expect([early.value, joined.value]).toEqual(['before', 'before'])
    expect(late.state).toBe('pending')
    expect(table.has('a')).toBe(false) // the fenced answer was not stored
    origin.calls[1]!.context.setTags(['t'])
    origin.calls[1]!.resolve('after')
    await settle()
    expect(late.value).toBe('after')
    expect(table.peek('a')).toBe('after')
    expect(table.stats()).toMatchObject({ fenced: 1, fills: 1, coalesced: 1 })
    await table.close()
  })

  it('fences a flight whose loader names the tag only after the invalidation', async () => {
    const { table } = alone()
    const origin = latchedLoader<string>()
    const read = outcome(table.fetch('a', origin.loader))
    await settle()
    await table.invalidateTags(['t'])
    origin.only().context.setTags(['t'])
    origin.only().resolve('loaded across the invalidation')
    await settle()
    expect(read.value).toBe('loaded across the invalidation')
    expect(table.has('a')).toBe(false)
    await table.close()
  })
})

describe('invalidateTags across two tables on one memoryL2 and one localBus', () => {
  it('broadcasts each tag, and the other table drops its row when the bus delivers', async () => {
    const { here, there } = twoProcesses()
    const origin = tagged('v1', ['t'])
    await here.fetch('a', origin.loader)
    expect(await there.fetch('a', origin.loader)).toBe('v1') // from L2
    expect(origin.calls()).toBe(1)
    expect(there.has('a')).toBe(true)
    const result = await here.invalidateTags(['t'])
    expect(result).toMatchObject({ applied: true, l2: 'written', broadcast: true })
    await settle()
    expect(there.has('a')).toBe(false)
    expect(there.stats()).toMatchObject({ tag_invalidations: 1 })
    const fresh = tagged('v2', ['t'])
    expect(await there.fetch('a', fresh.loader)).toBe('v2') // the L2 entry is stale too
    expect(fresh.calls()).toBe(1)
    // One stale row in L1 and one stale entry in L2.
    expect(there.stats()).toMatchObject({ tag_stale: 2, l2_hits: 1 })
    await Promise.all([here.close(), there.close()])
  })

  it('keeps a cold table from reading the tagged L2 entry after the first invalidated (no bus needed)', async () => {
    const clock = manualClock(0)
    const l2 = memoryL2({ clock })
    const make = () => createTable<string>({ name: 'tags', ttl: TTL, jitter: 0, sweepInterval: 1e9, clock, l2 })
    const here = make()
    await here.fetch('a', tagged('v1', ['t']).loader)
    await here.fetch('b', tagged('b1', ['u']).loader)
    await here.invalidateTags(['t'])
    const cold = make()
    const fresh = tagged('v2', ['t'])
    expect(await cold.fetch('a', fresh.loader)).toBe('v2')
    expect(await cold.fetch('b', fresh.loader)).toBe('b1') // another tag's entry is still served
    expect(fresh.calls()).toBe(1)
    expect(cold.stats()).toMatchObject({ tag_stale: 1, l2_hits: 1 })
    await Promise.all([here.close(), cold.close()])
  })

  it('makes rows stale that the other table loaded in the same millisecond, however many it loaded', async () => {
    const { here, there, make } = twoProcesses()
    // The other table loads several rows (each born on its own tag clock) before this one invalidates.
    for (const id of ['a', 'b', 'c', 'd']) await there.fetch(id, tagged(`${id}1`, ['t']).loader)
    await here.invalidateTags(['t'])
    await settle()
    expect(['a', 'b', 'c', 'd'].map((id) => there.has(id))).toEqual([false, false, false, false])
    const cold = make()
    const fresh = tagged('fresh', ['t'])
    for (const id of ['a', 'b', 'c', 'd']) expect(await cold.fetch(id, fresh.loader)).toBe('fresh')
    expect(fresh.calls()).toBe(4)
    await Promise.all([here.close(), there.close(), cold.close()])
  })

  it('makes rows stale that the other table loaded after hearing an earlier invalidation of the same millisecond', async () => {
    const { here, there, make } = twoProcesses()
    await here.invalidateTags(['t'])
    await settle()
    // Heard of it: the other table's births run on past this millisecond's versions.
    for (const id of ['a', 'b', 'c']) await there.fetch(id, tagged(`${id}1`, ['u']).loader)
    await here.invalidateTags(['u'])
    await settle()
    expect(['a', 'b', 'c'].map((id) => there.has(id))).toEqual([false, false, false])
    const cold = make()
    const fresh = tagged('fresh', ['u'])
    for (const id of ['a', 'b', 'c']) expect(await cold.fetch(id, fresh.loader)).toBe('fresh')
    expect(fresh.calls()).toBe(3)
    await Promise.all([here.close(), there.close(), cold.close()])
  })

  it('fences a flight of the other table that writes L2 after the invalidation: no process reads that entry', async () => {
    const { here, there, make } = twoProcesses()
    const origin = latchedLoader<string>()
    const read = outcome(there.fetch('a', origin.loader))
    await settle()
    await here.invalidateTags(['t'])
    origin.only().context.setTags(['t'])
    origin.only().resolve('loaded across the invalidation')
    await settle()
    expect(read.value).toBe('loaded across the invalidation')
    expect(there.has('a')).toBe(false)
    const cold = make()
    const fresh = tagged('fresh', ['t'])
    expect(await cold.fetch('a', fresh.loader)).toBe('fresh')
    await Promise.all([here.close(), there.close(), cold.close()])
  })
})

describe('a tagged row on an L2 store without tag versions', () => {
  it('is written there as a tombstone, so the store never serves it (an untagged row is written as usual)', async () => {
    const clock = manualClock(0)
    const inner = memoryL2({ clock })
    const writes: L2Write[] = []
    // A store of the user's own, without tagVersions / invalidateTags.
    const store: L2Store = {
      get: (table, id) => inner.get(table, id),
      set: (table, id, entry) => {
        writes.push(entry)
        return inner.set(table, id, entry)
      },
      nextVersion: (table, id, floor) => inner.nextVersion(table, id, floor),
      clear: (table) => inner.clear(table),
      close: () => inner.close(),
    }
    const make = () => createTable<string>({ name: 'tags', ttl: TTL, jitter: 0, sweepInterval: 1e9, clock, l2: store })
    const here = make()
    await here.fetch('a', tagged('tagged', ['t']).loader)
    await here.fetch('b', async () => 'plain')
    expect(writes.map((entry) => entry.kind)).toEqual(['tombstone', 'value'])
    expect(here.peek('a')).toBe('tagged') // L1 keeps it: this table knows its tags
    const result = await here.invalidateTags(['t'])
    expect(result.l2).toBe('failed') // the store cannot hold tag versions
    expect(here.has('a')).toBe(false)
    const cold = make()
    const fresh = tagged('fresh', ['t'])
    expect(await cold.fetch('a', fresh.loader)).toBe('fresh')
    expect(await cold.fetch('b', fresh.loader)).toBe('plain')
    expect(fresh.calls()).toBe(1)
    await Promise.all([here.close(), cold.close()])
  })
})

describe('bad tags', () => {
  it('invalidateTags rejects naming what is wrong', async () => {
    const { table } = alone()
    await expect(table.invalidateTags('t' as never)).rejects.toThrow(TypeError)
    await expect(table.invalidateTags('t' as never)).rejects.toThrow(/invalidateTags\(tags\) takes an array of tags/)
    await expect(table.invalidateTags([])).rejects.toThrow(/invalidateTags\(tags\) takes at least one tag/)
    await expect(table.invalidateTags([''])).rejects.toThrow(/tags\[0\] must be a non-empty string/)
    await expect(table.invalidateTags(['ok', 7 as never])).rejects.toThrow(/tags\[1\] must be a non-empty string, got 7/)
    await expect(table.invalidateTags(['x'.repeat(MAX_ID_LENGTH + 1)])).rejects.toThrow(RangeError)
    await expect(table.invalidateTags(['x'.repeat(MAX_ID_LENGTH + 1)])).rejects.toThrow(/tags\[0\] is longer than 16384 characters/)
    await expect(table.invalidateTags(Array.from({ length: 65 }, (_, i) => `t${i}`))).rejects.toThrow(/at most 64 tags, got 65/)
    await expect(table.invalidateTags(['t'], { version: -1 })).rejects.toThrow(/option "version" must be an integer/)
    await expect(table.invalidateTags(['t'], { colour: 'red' } as never)).rejects.toThrow(/colour/)
    expect(await table.invalidateTags(['x'.repeat(MAX_ID_LENGTH)])).toMatchObject({ applied: true })
    expect(await table.invalidateTags(Array.from({ length: 64 }, (_, i) => `t${i}`))).toMatchObject({ applied: true })
    expect(table.stats()).toMatchObject({ tag_invalidations: 65 })
    await table.close()
  })

  it('put rejects bad tags naming the option, and stores nothing', async () => {
    const { table } = alone()
    await expect(table.put('a', 'v', { tags: 't' as never })).rejects.toThrow(/put\("a"\) option "tags" takes an array of tags/)
    await expect(table.put('a', 'v', { tags: [''] })).rejects.toThrow(/put\("a"\) option "tags": tags\[0\] must be a non-empty string/)
    await expect(table.put('a', 'v', { tags: ['x'.repeat(MAX_ID_LENGTH + 1)] })).rejects.toThrow(RangeError)
    await expect(table.put('a', 'v', { tags: Array.from({ length: 65 }, (_, i) => `t${i}`) })).rejects.toThrow(/at most 64 tags/)
    expect(table.has('a')).toBe(false)
    await table.close()
  })

  it('a bad setTags inside a loader fails that load with the error, and nothing is stored', async () => {
    const { table } = alone()
    const bad = async (_id: Id, context: LoaderContext): Promise<string> => {
      context.setTags([42 as never])
      return 'never stored'
    }
    await expect(table.fetch('a', bad)).rejects.toThrow(/setTags: tags\[0\] must be a non-empty string, got 42/)
    expect(table.has('a')).toBe(false)
    const batch = latchedBatchLoader<string | undefined>()
    const read = outcome(table.fetchMany(['b', 'c'], batch.loader))
    await settle()
    expect(() => batch.only().context.setTags('b', 'b' as never)).toThrow(/setTags takes an array of tags/)
    expect(() => batch.only().context.setTags('zz', ['t'])).toThrow(/setTags\("zz", tags\): "zz" is not one of this call's ids/)
    batch.only().resolve(['B', 'C'])
    await settle()
    expect(read.value).toEqual(['B', 'C'])
    expect(table.stats()).toMatchObject({ load_errors: 1, fills: 2 })
    await table.close()
  })

  it('a closed table refuses invalidateTags with TableClosedError', async () => {
    const { table } = alone()
    await table.close()
    await expect(table.invalidateTags(['t'])).rejects.toThrow(/closed/)
  })
})

describe('a tag change racing close()', () => {
  /** A memoryL2 whose tag invalidations and clears wait until the test lets them go (never, here). */
  function stuckL2(clock: ReturnType<typeof manualClock>) {
    const inner = memoryL2({ clock })
    const asked: string[] = []
    const store: L2Store = {
      get: (table, id) => inner.get(table, id),
      set: (table, id, entry) => inner.set(table, id, entry),
      nextVersion: (table, id, floor) => inner.nextVersion(table, id, floor),
      clear: () => (asked.push('clear'), new Promise<void>(() => {})),
      tagVersions: (table, tags) => inner.tagVersions!(table, tags),
      invalidateTags: () => (asked.push('invalidateTags'), new Promise<number[]>(() => {})),
      close: () => inner.close(),
    }
    return { store, asked }
  }

  it('settles invalidateTags, a namespace clear() and a table clear() still waiting on L2 when the table closes (L2 failed)', async () => {
    const clock = manualClock(0)
    const { store, asked } = stuckL2(clock)
    const table = createTable<string>({ name: 'tags', ttl: TTL, jitter: 0, sweepInterval: 1e9, clock, l2: store })
    await table.fetch('a', tagged('v1', ['t']).loader)
    const tags = outcome(table.invalidateTags(['t']))
    const scoped = outcome(table.namespace('n').clear())
    const cleared = outcome(table.clear())
    await settle()
    expect(asked.sort()).toEqual(['clear', 'invalidateTags', 'invalidateTags'])
    await table.close()
    await settle()
    expect([tags.state, scoped.state, cleared.state]).toEqual(['fulfilled', 'fulfilled', 'fulfilled'])
    expect(tags.value).toMatchObject({ applied: false, l2: 'failed' })
    expect(scoped.value).toMatchObject({ l2: 'failed' })
    expect(cleared.value).toMatchObject({ l2: 'failed' })
  })

  it('settles them when close() is called in the same turn, before they reached L2', async () => {
    const clock = manualClock(0)
    const { store } = stuckL2(clock)
    const table = createTable<string>({ name: 'tags', ttl: TTL, jitter: 0, sweepInterval: 1e9, clock, l2: store })
    await table.fetch('a', tagged('v1', ['t']).loader)
    const tags = outcome(table.invalidateTags(['t']))
    const scoped = outcome(table.namespace('n').clear())
    const cleared = outcome(table.clear())
    await table.close()
    for (let i = 0; i < 4; i++) await settle()
    expect([tags.state, scoped.state, cleared.state]).toEqual(['fulfilled', 'fulfilled', 'fulfilled'])
    expect(cleared.value).toMatchObject({ l2: 'failed' })
  })
})

describe('a tag invalidation that L2 did not take (l2: failed)', () => {
  /** Two tables on one memoryL2 and one localBus whose store fails every tag invalidation (an error); a third table can be made cold. */
  function failingTags(options: Partial<TableOptions<string | undefined>> = {}) {
    const clock = manualClock(0)
    const l2 = failingTagInvalidations(memoryL2({ clock }))
    const bus = localBus()
    const make = (): Table<string | undefined> => createTable<string | undefined>({ name: 'tags', ttl: TTL, jitter: 0, sweepInterval: 1e9, clock, l2, bus, ...options })
    return { clock, make, here: make(), there: make() }
  }

  it('answers no later fetch the old value from L2, in the process that ran it nor in one that heard it on the bus', async () => {
    const { here, there } = failingTags()
    await here.fetch('a', tagged('v1', ['t']).loader)
    expect(await there.fetch('a', tagged('unused', ['t']).loader)).toBe('v1') // from L2
    expect(await here.invalidateTags(['t'])).toMatchObject({ l2: 'failed', broadcast: true })
    await settle()
    expect([here.has('a'), there.has('a')]).toEqual([false, false])
    const fresh = tagged('v2', ['t'])
    expect(await here.fetch('a', fresh.loader)).toBe('v2')
    expect(await there.fetch('a', fresh.loader)).toBe('v2') // the reload here replaced the L2 entry
    expect(fresh.calls()).toBe(1)
    expect(here.stats()).toMatchObject({ tag_stale: 2, fenced: 0 }) // the row in L1, the entry in L2
    await Promise.all([here.close(), there.close()])
  })

  it('answers no graced value from before it out of L2 (the fail-safe gets the error)', async () => {
    const { clock, here, there } = failingTags({ grace: 5 * TTL })
    await there.fetch('a', tagged('v1', ['t']).loader)
    await here.invalidateTags(['t'])
    await settle()
    clock.advance(TTL + 1) // the L2 entry is past its lifetime, within its grace
    const failing = async (_id: Id, context: LoaderContext): Promise<string> => {
      context.setTags(['t'])
      throw new Error('origin down')
    }
    await expect(here.fetch('a', failing)).rejects.toThrow('origin down')
    await expect(there.fetch('a', failing)).rejects.toThrow('origin down')
    await Promise.all([here.close(), there.close()])
  })

  it('answers no old value from L2 to a batch read (getMany) either', async () => {
    const batchLoader = async (ids: readonly Id[], context: { setTags(id: Id, tags: string[]): void }) => {
      for (const id of ids) context.setTags(id, ['t'])
      return ids.map(() => 'v2')
    }
    const { here } = failingTags({ batchLoader })
    await here.fetch('a', tagged('v1', ['t']).loader)
    await here.invalidateTags(['t'])
    expect(await here.getMany(['a', 'b'])).toEqual(['v2', 'v2'])
    await here.close()
  })
})

describe('a reload after a tag invalidation', () => {
  it("lands in L2 over a put's entry (a minted version): the next process reads it from there", async () => {
    const { l2, here, make } = twoProcesses()
    const put = await here.put('a', 'v1', { tags: ['t'] })
    expect(put.version).toBeGreaterThan(0)
    await here.invalidateTags(['t'])
    const cold = make()
    const fresh = tagged('v2', ['t'])
    expect(await cold.fetch('a', fresh.loader)).toBe('v2')
    // The reload carries the stale entry's version (L2's guard refuses only a lower one).
    expect(await l2.get('tags', 'a')).toMatchObject({ kind: 'value', value: 'v2', version: put.version })
    const next = make()
    expect(await next.fetch('a', fresh.loader)).toBe('v2')
    expect(await here.fetch('a', fresh.loader)).toBe('v2')
    expect(fresh.calls()).toBe(1)
    expect(next.stats()).toMatchObject({ l2_hits: 1, loads: 0 })
    await Promise.all([here.close(), cold.close(), next.close()])
  })

  it('lands in L2 from the process that put it, once its own stale row was swept', async () => {
    const { l2, clock, here, make } = twoProcesses({ sweepInterval: 1_000 })
    const put = await here.put('a', 'v1', { tags: ['t'] })
    await here.invalidateTags(['t'])
    await advanceSettled(clock, 2_000) // the sweeper reclaims the stale row
    expect(here.size).toBe(0)
    const fresh = tagged('v2', ['t'])
    expect(await here.fetch('a', fresh.loader)).toBe('v2')
    expect(await l2.get('tags', 'a')).toMatchObject({ value: 'v2', version: put.version })
    const next = make()
    expect(await next.fetch('a', fresh.loader)).toBe('v2')
    expect(fresh.calls()).toBe(1)
    await Promise.all([here.close(), next.close()])
  })
})
