/**
 * What a custom `L2Store` returns is checked where it enters: a `get` that resolves `null`, returns
 * synchronously, or answers an entry of an unknown kind, a version outside [0, `MAX_VERSION`] or a
 * lifetime that is not a finite number of at most a year; a `set` that answers a non-boolean or
 * returns no promise; a `nextVersion` below its floor or that returns no promise; a lease `acquire`
 * that answers a non-boolean. Each is a counted L2 failure (`l2_errors`, an `l2_error` event saying
 * what was wrong), and the loader (or the put) answers; nothing the store said is stored or served.
 */
import { describe, expect, it } from 'vitest'
import { type TableEvents, createTable, memoryL2 } from '../src/index.js'
import type { L2Store } from '../src/store.js'
import { MAX_TTL, MAX_VERSION } from '../src/limits.js'
import { manualClock } from '../src/testing.js'

type Row = { v: string }

function storeAnswering(get: () => unknown): L2Store {
  return {
    get: get as L2Store['get'],
    set: async () => true,
    nextVersion: async (_t, _i, floor) => floor,
    clear: async () => {},
    close: async () => {},
  }
}

describe('a custom L2 store whose get answers', () => {
  const cases: [string, () => unknown][] = [
    ['null', async () => null],
    ['synchronously (not a promise)', () => ({ kind: 'value', value: { v: 'sync' }, version: 0, ttl: 1_000 })],
    ['an entry of an unknown kind', async () => ({ kind: 'mystery', version: 0, ttl: 1_000 })],
    ['a version of 2^60', async () => ({ kind: 'value', value: { v: 'huge version' }, version: 2 ** 60, ttl: 1_000 })],
    ['a lifetime of Infinity', async () => ({ kind: 'value', value: { v: 'forever' }, version: 0, ttl: Number.POSITIVE_INFINITY })],
    ['a lifetime of NaN', async () => ({ kind: 'value', value: { v: 'nan' }, version: 0, ttl: Number.NaN })],
    ['a string', async () => 'value'],
    [
      'a thenable whose then throws',
      () => ({
        // biome-ignore lint/suspicious/noThenProperty: a thenable is what this case answers
        then() {
          throw new Error('then threw')
        },
      }),
    ],
    [
      'an entry whose kind cannot be read',
      async () =>
        Object.defineProperty({}, 'kind', {
          get() {
            throw new Error('kind getter threw')
          },
          enumerable: true,
        }),
    ],
  ]
  for (const [name, get] of cases) {
    it(`${name}: is a counted L2 failure, and the loader answers`, async () => {
      const clock = manualClock(0)
      const table = createTable<Row>({ ttl: 1_000, jitter: 0, sweepInterval: 1e9, clock, l2: storeAnswering(get) })
      expect(await table.fetch('a', () => ({ v: 'loaded' }))).toEqual({ v: 'loaded' })
      const s = table.stats()
      expect(s.loads).toBe(1)
      expect(s.l2_hits).toBe(0)
      expect(s.l2_errors).toBe(1)
      expect(s.l2_corrupt).toBe(0)
      clock.advance(2_000)
      expect(table.has('a')).toBe(false) // the row lives the table's ttl, not the store's
      expect(await table.put('a', { v: 'put' })).toMatchObject({ applied: true })
      expect(MAX_VERSION).toBe(2 ** 52)
      await table.close()
    })
  }
})

/** A store whose every call answers as memoryL2's would, but for the calls `over` replaces. */
function storeWith(over: Partial<L2Store>): L2Store {
  return {
    get: async () => undefined,
    set: async () => true,
    nextVersion: async (_t, _i, floor) => floor,
    clear: async () => {},
    close: async () => {},
    ...over,
  }
}

/** A table on `l2` whose l2_error events are kept. */
function tableOn(l2: L2Store, options: { lease?: boolean } = {}) {
  const table = createTable<Row>({ name: 'custom', ttl: 1_000, jitter: 0, sweepInterval: 1e9, clock: manualClock(0), l2, ...options })
  const errors: TableEvents['l2_error'][] = []
  table.events.on('l2_error', (event) => errors.push(event))
  return { table, errors }
}

describe('a custom L2 store whose get answers an entry out of bounds', () => {
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ['a lifetime of two years (finite, but longer than a year)', { version: 0, ttl: 2 * MAX_TTL }, /L2 get answered an entry of lifetime 63072000000, not a finite number of ms up to 31536000000/],
    ['a lifetime of a year and 1 ms', { version: 0, ttl: MAX_TTL + 1 }, /lifetime 31536000001, not a finite number of ms up to 31536000000/],
    ['a version of -1', { version: -1, ttl: 1_000 }, /L2 get answered an entry of version -1, not in \[0, 4503599627370496\]/],
    ['a version of 1.5', { version: 1.5, ttl: 1_000 }, /L2 get answered an entry of version 1.5, not in \[0, 4503599627370496\]/],
    ['a version of 2^52 + 2', { version: 2 ** 52 + 2, ttl: 1_000 }, /L2 get answered an entry of version 4503599627370498, not in \[0, 4503599627370496\]/],
  ]
  for (const [name, entry, message] of cases) {
    it(`${name}: counted in l2_errors with an l2_error event naming it, and the loader answers`, async () => {
      const { table, errors } = tableOn(storeWith({ get: async () => ({ kind: 'value', value: { v: 'from L2' }, ...entry }) as never }))
      expect(await table.fetch('a', () => ({ v: 'loaded' }))).toEqual({ v: 'loaded' })
      expect(table.stats()).toMatchObject({ l2_errors: 1, l2_corrupt: 0, l2_hits: 0, loads: 1 })
      expect(errors).toHaveLength(1)
      expect(errors[0]).toMatchObject({ table: 'custom', op: 'get', id: 'a' })
      expect(String((errors[0]!.error as Error).message)).toMatch(message)
      await table.close()
    })
  }

  it('a version of exactly 2^52 and a lifetime of exactly a year are within bounds: an L2 hit', async () => {
    for (const entry of [
      { version: MAX_VERSION, ttl: 1_000 },
      { version: 0, ttl: MAX_TTL },
    ]) {
      const { table, errors } = tableOn(storeWith({ get: async () => ({ kind: 'value', value: { v: 'from L2' }, ...entry }) }))
      expect(await table.fetch('a', () => ({ v: 'loaded' }))).toEqual({ v: 'from L2' })
      expect(table.stats()).toMatchObject({ l2_errors: 0, l2_hits: 1, loads: 0 })
      expect(errors).toEqual([])
      await table.close()
    }
  })
})

describe('a custom L2 store whose set', () => {
  const cases: [string, L2Store['set'], RegExp][] = [
    ['answers "yes" (not a boolean)', (async () => 'yes') as never, /L2 set answered "yes", not a boolean/],
    ['returns no promise', (() => true) as never, /L2 set returned true, not a promise/],
  ]
  for (const [name, set, message] of cases) {
    it(`${name}: the put is applied in L1 and resolves l2: 'failed', counted in l2_errors with an l2_error event naming it`, async () => {
      const { table, errors } = tableOn(storeWith({ set }))
      expect(await table.put('a', { v: 'put' })).toMatchObject({ applied: true, l2: 'failed' })
      expect(table.peek('a')).toEqual({ v: 'put' })
      expect(table.stats()).toMatchObject({ l2_errors: 1, l2_corrupt: 0 })
      expect(errors).toHaveLength(1)
      expect(errors[0]).toMatchObject({ table: 'custom', op: 'set', id: 'a' })
      expect(String((errors[0]!.error as Error).message)).toMatch(message)
      await table.close()
    })
  }
})

describe('a custom L2 store whose nextVersion', () => {
  it('answers a version below its floor: counted in l2_errors with an l2_error event naming it; the put takes a version above the floor', async () => {
    const { table, errors } = tableOn(storeWith({ nextVersion: async (_t, _i, floor) => floor - 1 }))
    expect(await table.put('a', { v: 'one' }, { version: 10 })).toMatchObject({ applied: true, version: 10 })
    expect(errors).toEqual([])
    const second = await table.put('a', { v: 'two' })
    expect(second).toMatchObject({ applied: true, version: 11 })
    expect(table.peek('a')).toEqual({ v: 'two' })
    expect(table.stats()).toMatchObject({ l2_errors: 1, l2_corrupt: 0 })
    expect(errors).toHaveLength(1)
    expect(errors[0]).toMatchObject({ table: 'custom', op: 'nextVersion', id: 'a' })
    expect(String((errors[0]!.error as Error).message)).toMatch(/L2 nextVersion answered 10, not a version in \[11, 4503599627370496\]/)
    await table.close()
  })

  it('returns no promise: counted in l2_errors with an l2_error event naming it; the put is still applied', async () => {
    const { table, errors } = tableOn(storeWith({ nextVersion: ((_t: string, _i: unknown, floor: number) => floor) as never }))
    expect(await table.put('a', { v: 'put' })).toMatchObject({ applied: true })
    expect(table.peek('a')).toEqual({ v: 'put' })
    expect(table.stats()).toMatchObject({ l2_errors: 1, l2_corrupt: 0 })
    expect(errors).toHaveLength(1)
    expect(errors[0]).toMatchObject({ table: 'custom', op: 'nextVersion', id: 'a' })
    expect(String((errors[0]!.error as Error).message)).toMatch(/L2 nextVersion returned 1, not a promise/)
    await table.close()
  })
})

describe('a custom L2 store whose leases.acquire answers a non-boolean', () => {
  it('is counted in l2_errors with an l2_error event naming it; the flight loads without the lease', async () => {
    const inner = memoryL2()
    const l2: L2Store = {
      get: inner.get.bind(inner),
      set: inner.set.bind(inner),
      nextVersion: inner.nextVersion.bind(inner),
      clear: inner.clear.bind(inner),
      close: inner.close.bind(inner),
      leases: { acquire: (async () => 'sure') as never, release: async () => true, void: async () => {} },
    }
    const { table, errors } = tableOn(l2, { lease: true })
    expect(await table.fetch('a', () => ({ v: 'loaded' }))).toEqual({ v: 'loaded' })
    expect(table.stats()).toMatchObject({ l2_errors: 1, l2_corrupt: 0, loads: 1, lease_acquired: 0 })
    expect(errors).toHaveLength(1)
    expect(errors[0]).toMatchObject({ table: 'custom', op: 'leases.acquire', id: 'a' })
    expect(String((errors[0]!.error as Error).message)).toMatch(/L2 leases.acquire answered "sure", not a boolean/)
    await table.close()
    await inner.close()
  })
})

describe('a custom L2 store whose getMany answers fewer entries than ids', () => {
  it('is a counted L2 failure told with an EchoStore error, and the batch loader answers', async () => {
    const clock = manualClock(0)
    const store: L2Store = { ...storeAnswering(async () => undefined), getMany: async () => [] }
    const table = createTable<Row>({ clock, l2: store, batchLoader: (ids) => ids.map((id) => ({ v: `loaded ${id}` })) })
    const errors: TableEvents['l2_error'][] = []
    table.events.on('l2_error', (event) => errors.push(event))
    expect(await table.getMany(['a', 'b'])).toEqual([{ v: 'loaded a' }, { v: 'loaded b' }])
    expect(table.stats().l2_errors).toBeGreaterThanOrEqual(1)
    expect(errors.length).toBeGreaterThanOrEqual(1)
    expect(String((errors[0]!.error as Error).message)).toMatch(/^echostore: L2 getMany answered .* for 2 ids: an array of one entry \(or undefined\) per id, in order/)
    await table.close()
  })
})
