/**
 * Grace: a row's value kept `grace` ms past its expiry as a fallback. A graced row is no hit; it
 * answers callers when the origin fails (the fail-safe, then its back-off), when a load outlives
 * its soft timeout, and at once under stale-while-revalidate. A change always beats grace.
 */
import { describe, expect, it } from 'vitest'
import type { CoherenceMessage } from '../src/store.js'
import { type TableEvents, createTable, localBus, memoryL2 } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { latchedLoader, outcome, settle } from './support/latch.js'

const TTL = 1_000
const GRACE = 10_000
const fail = () => Promise.reject(new Error('origin down'))

/** A table with grace on a manual clock, one row `k` = 'v1' loaded at 0 and expired at `TTL`. */
async function gracedTable(options: Record<string, unknown> = {}) {
  const clock = manualClock(0)
  const table = createTable<string | undefined>({ name: 'g', ttl: TTL, jitter: 0, grace: GRACE, sweepInterval: 1e9, clock, ...options })
  const stale: TableEvents['stale'][] = []
  const errors: unknown[] = []
  table.events.on('stale', (event) => stale.push(event))
  table.events.on('error', ({ error }) => errors.push(error))
  expect(await table.fetch('k', () => 'v1')).toBe('v1')
  clock.set(TTL + 500) // 500 ms past its expiry: graced
  return { clock, table, stale, errors }
}

describe('grace options', () => {
  it('are validated naming the option: grace ≥ 0, staleWhileRevalidate needs grace, graceBackoff and softTimeout in [1, 2^31 − 1]', () => {
    expect(() => createTable({ grace: -1 })).toThrow(/option "grace" must be a number of ms in \[0, 31536000000\]/)
    expect(() => createTable({ grace: '1s' as never })).toThrow(TypeError)
    expect(() => createTable({ staleWhileRevalidate: true })).toThrow(/option "staleWhileRevalidate" needs "grace" > 0/)
    expect(() => createTable({ grace: 1, staleWhileRevalidate: 'yes' as never })).toThrow(TypeError)
    expect(() => createTable({ graceBackoff: 0 })).toThrow(/option "graceBackoff"/)
    expect(() => createTable({ softTimeout: 0.5 })).toThrow(/option "softTimeout"/)
    const table = createTable({ grace: 1_000, staleWhileRevalidate: true, graceBackoff: 100, softTimeout: 50 })
    void table.close()
  })
})

describe('a graced row', () => {
  it('is no hit: fetching it is a miss that loads, and the answer replaces it', async () => {
    const { table } = await gracedTable()
    expect(await table.fetch('k', () => 'v2')).toBe('v2')
    expect(table.stats()).toMatchObject({ hits: 0, misses: 2, loads: 2, stale_hits: 0 })
    await table.close()
  })

  it('is reclaimed by the sweeper once past its expiry plus the grace, and counts against capacity until then', async () => {
    const clock = manualClock(0)
    const table = createTable<string | undefined>({ ttl: TTL, jitter: 0, grace: GRACE, sweepInterval: 100, clock })
    await table.fetch('k', () => 'v1')
    clock.set(TTL + GRACE - 100)
    expect(table.stats()).toMatchObject({ size: 1, swept: 0 })
    clock.set(TTL + GRACE + 100)
    expect(table.stats()).toMatchObject({ size: 0, swept: 1 })
    await table.close()
  })
})

describe('the fail-safe', () => {
  it('answers every waiter of a failed flight with the graced value, still reports the error, and counts it', async () => {
    const { table, stale, errors } = await gracedTable()
    const origin = latchedLoader<string>()
    const readers = Array.from({ length: 5 }, () => table.fetch('k', origin.loader))
    await settle()
    origin.only().reject(new Error('origin down'))
    expect(await Promise.all(readers)).toEqual(Array(5).fill('v1'))
    expect(errors).toHaveLength(1)
    expect(table.stats()).toMatchObject({ failsafe: 1, load_errors: 1, stale_hits: 5, flights: 2, coalesced: 4 })
    expect(stale).toEqual([{ table: 'g', id: 'k', callers: 5, staleness: 500, reason: 'failsafe' }])
    await table.close()
  })

  it('does not try the origin again within graceBackoff, then tries it once', async () => {
    const { clock, table } = await gracedTable({ graceBackoff: 2_000 })
    let calls = 0
    const failing = () => (calls++, fail())
    expect(await table.fetch('k', failing)).toBe('v1')
    expect(calls).toBe(1)
    for (let i = 0; i < 10; i++) {
      clock.advance(150) // 1.5 s, within the back-off
      expect(await table.fetch('k', failing)).toBe('v1')
    }
    expect(calls).toBe(1)
    expect(table.stats()).toMatchObject({ stale_hits: 11, failsafe: 1, flights: 2 })
    clock.advance(600) // past the back-off: one try, which fails and re-arms it
    await Promise.all([table.fetch('k', failing), table.fetch('k', failing)])
    expect(calls).toBe(2)
    expect(await table.fetch('k', () => 'never')).toBe('v1')
    expect(calls).toBe(2)
    const stats = table.stats()
    expect(stats.misses).toBe(stats.flights + stats.coalesced)
    await table.close()
  })

  it('also absorbs a loadTimeout', async () => {
    const { clock, table, errors } = await gracedTable({ loadTimeout: 300 })
    const answer = outcome(table.fetch('k', () => new Promise<string>(() => {})))
    await settle()
    clock.advance(300)
    await settle()
    expect(answer).toMatchObject({ state: 'fulfilled', value: 'v1' })
    expect(String(errors[0])).toMatch(/loadTimeout/)
    expect(table.stats()).toMatchObject({ failsafe: 1, load_errors: 1, inflight: 0 })
    await table.close()
  })

  it('has nothing to answer with past the grace: the error reaches the caller', async () => {
    const { clock, table } = await gracedTable()
    clock.set(TTL + GRACE + 1)
    await expect(table.fetch('k', fail)).rejects.toThrow('origin down')
    expect(table.stats()).toMatchObject({ failsafe: 0, stale_hits: 0 })
    await table.close()
  })

  it('uses a graced value another table left in a shared L2', async () => {
    const clock = manualClock(0)
    const l2 = memoryL2({ clock })
    const options = { name: 'shared', ttl: TTL, jitter: 0, grace: GRACE, sweepInterval: 1e9, clock, l2 }
    const [a, b] = [createTable<string | undefined>(options), createTable<string | undefined>(options)]
    expect(await a.fetch('k', () => 'from A')).toBe('from A')
    clock.set(TTL + 2_000) // past the entry's ttl, within its grace in L2
    expect(await b.fetch('k', fail)).toBe('from A')
    expect(b.stats()).toMatchObject({ failsafe: 1, stale_hits: 1, l2_hits: 0, loads: 1 })
    expect(await b.fetch('k', () => 'never')).toBe('from A') // re-armed in B: the back-off answers it
    await Promise.all([a.close(), b.close()])
  })

  it('holds the origin off on a full table too: the graced value from L2 is stored whatever admission says', async () => {
    const clock = manualClock(0)
    const l2 = memoryL2({ clock })
    const options = { name: 'shared', ttl: TTL, jitter: 0, grace: GRACE, graceBackoff: 5_000, sweepInterval: 1e9, clock, l2 }
    const a = createTable<string | undefined>(options)
    const b = createTable<string | undefined>({ ...options, capacity: 1 })
    expect(await a.fetch('k', () => 'from A')).toBe('from A')
    for (let i = 0; i < 5; i++) await b.fetch('hot', () => 'H') // b is full of a row read often
    clock.set(TTL + 2_000) // k's entry is past its ttl, within its grace in L2
    await b.fetch('hot', () => 'H')
    let calls = 0
    const failing = () => {
      calls++
      return Promise.reject(new Error('origin down'))
    }
    for (let i = 0; i < 4; i++) {
      expect(await b.fetch('k', failing)).toBe('from A')
      clock.advance(100) // within graceBackoff
    }
    expect(calls).toBe(1)
    expect(b.stats()).toMatchObject({ failsafe: 1, stale_hits: 4, load_errors: 1, full_skips: 0, evictions: 1 })
    await Promise.all([a.close(), b.close()])
  })

  it('holds the origin off on a full table whose hand meets only young tombstones first: the graced value walks past them', async () => {
    const clock = manualClock(0)
    const l2 = memoryL2({ clock })
    const options = { name: 'shared', ttl: TTL, jitter: 0, grace: GRACE, sweepInterval: 1e9, clock, l2 }
    const a = createTable<string | undefined>({ ...options, capacity: 100 })
    const b = createTable<string | undefined>(options)
    for (let i = 0; i < 70; i++) await a.fetch(`t${i}`, () => `t${i}`)
    for (let i = 0; i < 70; i++) await a.invalidate(`t${i}`) // 70 young tombstones, first in the hand's way
    for (let i = 70; i < 100; i++) await a.fetch(`v${i}`, () => `v${i}`) // a full table
    await b.put('k', 'from B')
    clock.advance(TTL + 500) // k's entry is past its ttl, within its grace in L2
    let calls = 0
    const failing = () => {
      calls++
      return Promise.reject(new Error('origin down'))
    }
    expect([await a.fetch('k', failing), await a.fetch('k', failing)]).toEqual(['from B', 'from B'])
    expect(calls).toBe(1)
    expect(a.stats()).toMatchObject({ failsafe: 1, full_skips: 0, evictions: 1 })
    await Promise.all([a.close(), b.close()])
  })

  it('answers the newest graced value it knows: a newer one its flight read in L2 beats its own older row', async () => {
    const clock = manualClock(0)
    const l2 = memoryL2({ clock })
    const options = { name: 'shared', ttl: TTL, jitter: 0, grace: GRACE, sweepInterval: 1e9, clock, l2 }
    const [a, b] = [createTable<string | undefined>(options), createTable<string | undefined>(options)]
    expect(await a.fetch('k', () => 'bar')).toBe('bar')
    expect((await b.put('k', 'baz')).applied).toBe(true) // no bus: A still holds 'bar', L2 the newer 'baz'
    clock.set(TTL + 2_000) // both graced
    expect(await a.fetch('k', fail)).toBe('baz')
    expect(a.stats()).toMatchObject({ failsafe: 1, stale_hits: 1 })
    expect(await a.fetch('k', () => 'never')).toBe('baz') // the back-off answers the newer value too
    expect(a.peek('k')).toBeUndefined() // graced, not live
    await Promise.all([a.close(), b.close()])
  })
})

describe('a graced L2 entry another process wrote', () => {
  it("does not keep a cold process from caching its own load: the load carries the entry's version, and replaces it in L2", async () => {
    const clock = manualClock(0)
    const l2 = memoryL2({ clock })
    const options = { name: 'shared', ttl: TTL, jitter: 0, grace: GRACE, sweepInterval: 1e9, clock, l2 }
    const a = createTable<string | undefined>(options)
    expect((await a.put('k', 'from A')).l2).toBe('written')
    clock.set(TTL + 2_000) // past the entry's ttl, within its grace in L2
    const [b, c] = [createTable<string | undefined>(options), createTable<string | undefined>(options)]
    expect(await b.fetch('k', () => 'from B')).toBe('from B')
    expect(b.has('k')).toBe(true)
    expect(b.stats()).toMatchObject({ fills: 1, fenced: 0 })
    expect(await c.fetch('k', () => 'never')).toBe('from B')
    await Promise.all([a.close(), b.close(), c.close()])
  })
})

describe('stale-while-revalidate', () => {
  it('answers a herd of stale readers at once with the graced value and refreshes it with one flight', async () => {
    const { table, stale } = await gracedTable({ staleWhileRevalidate: true })
    const origin = latchedLoader<string>()
    const answers = await Promise.all(Array.from({ length: 100 }, () => table.fetch('k', origin.loader)))
    expect(answers).toEqual(Array(100).fill('v1'))
    await settle()
    expect(origin.calls).toHaveLength(1)
    expect(table.stats()).toMatchObject({ misses: 101, flights: 2, coalesced: 99, stale_hits: 100, inflight: 1 })
    expect(stale).toEqual([{ table: 'g', id: 'k', callers: 100, staleness: 500, reason: 'swr' }])
    origin.only().resolve('v2')
    await settle()
    expect(await table.fetch('k', () => 'never')).toBe('v2')
    expect(table.stats()).toMatchObject({ hits: 1, inflight: 0 })
    await table.close()
  })

  it('joins a refresh already in progress without waiting for it', async () => {
    const { table } = await gracedTable({ staleWhileRevalidate: true })
    const origin = latchedLoader<string>()
    expect(await table.fetch('k', origin.loader)).toBe('v1')
    await settle()
    expect(await table.fetch('k', origin.loader)).toBe('v1')
    await settle()
    expect(origin.calls).toHaveLength(1)
    origin.only().resolve('v2')
    await settle()
    await table.close()
  })
})

describe('soft timeouts', () => {
  it('answer the waiters with the graced value once the flight is slower than softTimeout; the flight still fills the row', async () => {
    const { clock, table, stale } = await gracedTable({ softTimeout: 200 })
    const origin = latchedLoader<string>()
    const early = outcome(table.fetch('k', origin.loader))
    await settle()
    clock.advance(199)
    await settle()
    expect(early.state).toBe('pending')
    clock.advance(1)
    await settle()
    expect(early).toMatchObject({ state: 'fulfilled', value: 'v1' })
    expect(await table.fetch('k', origin.loader)).toBe('v1') // a joiner after the soft timeout gets it at once
    expect(stale.map((event) => event.reason)).toEqual(['soft', 'soft'])
    origin.only().resolve('v2')
    await settle()
    expect(await table.fetch('k', () => 'never')).toBe('v2')
    expect(table.stats()).toMatchObject({ stale_hits: 2, loads: 2, fills: 2, hits: 1 })
    await table.close()
  })

  it('stop answering joiners once the graced value is past its grace: they wait for the flight', async () => {
    const { clock, table } = await gracedTable({ softTimeout: 200 }) // 'v1' expired at 1,000, graced until 11,000; now 1,500
    const origin = latchedLoader<string>()
    const early = outcome(table.fetch('k', origin.loader))
    await settle()
    clock.advance(200)
    await settle()
    expect(early.value).toBe('v1')
    clock.set(TTL + GRACE) // the grace is over; the flight still runs
    const late = outcome(table.fetch('k', origin.loader))
    const lateWithTimeout = outcome(table.fetch('k', origin.loader, { timeout: 60_000 }))
    await settle()
    expect([late.state, lateWithTimeout.state]).toEqual(['pending', 'pending'])
    origin.only().resolve('v2')
    await settle()
    expect([late.value, lateWithTimeout.value]).toEqual(['v2', 'v2'])
    await table.close()
  })

  it('as a fetch option, answers that caller alone', async () => {
    const { clock, table } = await gracedTable()
    const origin = latchedLoader<string>()
    const patient = outcome(table.fetch('k', origin.loader))
    const hurried = outcome(table.fetch('k', origin.loader, { softTimeout: 100 }))
    await settle()
    clock.advance(100)
    await settle()
    expect(hurried).toMatchObject({ state: 'fulfilled', value: 'v1' })
    expect(patient.state).toBe('pending')
    origin.only().resolve('v2')
    await settle()
    expect(patient).toMatchObject({ state: 'fulfilled', value: 'v2' })
    await table.close()
  })

  it("as a fetch option, replaces the table's for that caller: longer or shorter, and for a caller joining after the table's passed", async () => {
    const { clock, table, stale } = await gracedTable({ softTimeout: 100 })
    const origin = latchedLoader<string>()
    const plain = outcome(table.fetch('k', origin.loader))
    const patient = outcome(table.fetch('k', origin.loader, { softTimeout: 500 }))
    const hurried = outcome(table.fetch('k', origin.loader, { softTimeout: 50 }))
    await settle()
    clock.advance(50)
    await settle()
    expect([plain.state, patient.state, hurried]).toEqual(['pending', 'pending', { state: 'fulfilled', value: 'v1' }])
    clock.advance(50) // the table's passes: the plain caller takes it, the patient one waits for its own
    await settle()
    expect([plain, patient.state]).toEqual([{ state: 'fulfilled', value: 'v1' }, 'pending'])
    const late = outcome(table.fetch('k', origin.loader, { softTimeout: 300 })) // joins after the table's passed
    await settle()
    expect(late.state).toBe('pending')
    clock.advance(299)
    await settle()
    expect([patient.state, late.state]).toEqual(['pending', 'pending'])
    clock.advance(1)
    await settle()
    expect([patient.state, late]).toEqual(['pending', { state: 'fulfilled', value: 'v1' }])
    clock.advance(100) // 500 ms since the patient caller's fetch
    await settle()
    expect(patient).toMatchObject({ state: 'fulfilled', value: 'v1' })
    expect(stale.map((event) => [event.reason, event.callers])).toEqual([
      ['soft', 1],
      ['soft', 1],
      ['soft', 1],
      ['soft', 1],
    ])
    origin.only().resolve('v2')
    await settle()
    expect(table.stats()).toMatchObject({ stale_hits: 4, loads: 2, inflight: 0 })
    await table.close()
  })

  it('answer a graced L2 entry another process wrote, in a process whose L1 is cold: table-wide, and per fetch even when L2 answered after it passed', async () => {
    const clock = manualClock(0)
    const l2 = memoryL2({ clock })
    const options = { name: 'shared', ttl: TTL, jitter: 0, grace: GRACE, sweepInterval: 1e9, clock, l2 }
    const a = createTable<string | undefined>(options)
    expect(await a.fetch('k', () => 'from A')).toBe('from A')
    expect(await a.fetch('j', () => 'j from A')).toBe('j from A')
    clock.set(TTL + 2_000) // past the entries' ttl, within their grace in L2
    const b = createTable<string | undefined>({ ...options, softTimeout: 200 })
    const stale: TableEvents['stale'][] = []
    b.events.on('stale', (event) => stale.push(event))
    const origin = latchedLoader<string>()
    const early = outcome(b.fetch('k', origin.loader))
    await settle()
    clock.advance(199)
    await settle()
    expect(early.state).toBe('pending')
    clock.advance(1)
    await settle()
    expect(early).toMatchObject({ state: 'fulfilled', value: 'from A' })
    expect(stale).toEqual([{ table: 'shared', id: 'k', callers: 1, staleness: 2_200, reason: 'soft' }])
    // L2 answers after the caller's own soft timeout passed: the caller is answered as the entry arrives.
    const c = createTable<string | undefined>(options)
    const slowGet = l2.get.bind(l2)
    let letL2Answer = () => {}
    l2.get = (...args) => new Promise((resolve) => (letL2Answer = () => resolve(slowGet(...args))))
    const hurried = outcome(c.fetch('j', origin.loader, { softTimeout: 10, timeout: 60_000 }))
    await settle()
    clock.advance(10)
    await settle()
    expect(hurried.state).toBe('pending')
    letL2Answer()
    await settle()
    expect(hurried).toMatchObject({ state: 'fulfilled', value: 'j from A' })
    for (const call of origin.calls) call.resolve('fresh')
    await settle()
    expect(await b.fetch('k', () => 'never')).toBe('fresh')
    await Promise.all([a.close(), b.close(), c.close()])
  })

  it('answering a live row (a forced refresh stored it meanwhile) answer a fresh value: no stale answer counted or told', async () => {
    for (const soft of ['per fetch', 'table'] as const) {
      const { clock, table, stale } = await gracedTable(soft === 'table' ? { softTimeout: 100 } : {})
      const slow = latchedLoader<string>()
      const waiter = outcome(table.fetch('k', slow.loader, soft === 'per fetch' ? { softTimeout: 100 } : { timeout: 60_000 }))
      await settle()
      // A forced refresh supersedes the slow flight and stores a live row at once.
      expect(await table.fetch('k', () => 'fresh', { forceRefresh: true }), soft).toBe('fresh')
      await settle()
      const before = table.stats().stale_hits
      clock.advance(100) // the soft timeout passes: the row it answers is live
      await settle()
      expect(waiter, soft).toMatchObject({ state: 'fulfilled', value: 'fresh' })
      expect(table.stats().stale_hits - before, soft).toBe(0)
      expect(stale, soft).toEqual([])
      slow.only().resolve('late')
      await settle()
      await table.close()
    }
  })

  it('do nothing without a graced value: the caller waits for the load', async () => {
    const clock = manualClock(0)
    const table = createTable<string | undefined>({ grace: GRACE, softTimeout: 100, clock })
    const origin = latchedLoader<string>()
    const waiting = outcome(table.fetch('new', origin.loader, { softTimeout: 50 }))
    await settle()
    clock.advance(500)
    await settle()
    expect(waiting.state).toBe('pending')
    origin.only().resolve('loaded')
    await settle()
    expect(waiting).toMatchObject({ state: 'fulfilled', value: 'loaded' })
    expect(table.stats().stale_hits).toBe(0)
    await table.close()
  })
})

describe('a change always beats grace', () => {
  const changes: [string, (env: Awaited<ReturnType<typeof gracedTable>> & { deliver(message: unknown): void }) => unknown][] = [
    ['invalidate', ({ table }) => table.invalidate('k')],
    ['an applied coherence message', ({ deliver }) => deliver({ type: 'message', message: { table: 'g', id: 'k', version: 9, kind: 'invalidate', origin: 'elsewhere' } satisfies CoherenceMessage })],
    ['a bus gap', ({ deliver }) => deliver({ type: 'gap' })],
  ]
  for (const [label, change] of changes) {
    it(`${label} removes the graced value: a failing origin then fails the fetch`, async () => {
      const handlers: ((delivery: unknown) => void)[] = []
      const bus = { publish: async () => {}, subscribe: (handler: (delivery: unknown) => void) => (handlers.push(handler), () => {}), close: async () => {} }
      const env = await gracedTable({ bus })
      await change({ ...env, deliver: (message) => handlers[0]!(message) })
      await expect(env.table.fetch('k', fail)).rejects.toThrow('origin down')
      expect(env.table.stats()).toMatchObject({ failsafe: 0, stale_hits: 0 })
      await env.table.close()
    })
  }

  it('a put replaces it: the put value is what a failing origin falls back on', async () => {
    const { clock, table } = await gracedTable()
    await table.put('k', 'put')
    clock.advance(TTL + 1)
    expect(await table.fetch('k', fail)).toBe('put')
    await table.close()
  })

  it('a flight fenced by a change does not fall back on the graced value', async () => {
    const bus = localBus()
    const { table } = await gracedTable({ bus })
    const origin = latchedLoader<string>()
    const reading = table.fetch('k', origin.loader)
    await settle()
    await table.invalidate('k')
    origin.only().reject(new Error('origin down'))
    await expect(reading).rejects.toThrow('origin down')
    await table.close()
    await bus.close()
  })
})

describe('loader-chosen lifetimes and forced refreshes', () => {
  it('setTtl sets this answer’s lifetime; 0 answers and stores nothing; a bad value throws inside the loader', async () => {
    const clock = manualClock(0)
    const table = createTable<string | undefined>({ ttl: 60_000, jitter: 0, clock, sweepInterval: 1e9 })
    expect(await table.fetch('short', (_id, { setTtl }) => (setTtl(100), 's'))).toBe('s')
    clock.set(99)
    expect(await table.fetch('short', () => 'reloaded')).toBe('s')
    clock.set(100)
    expect(await table.fetch('short', () => 'reloaded')).toBe('reloaded')
    expect(await table.fetch('none', (_id, { setTtl }) => (setTtl(0), 'n'))).toBe('n')
    expect(table.stats().size).toBe(1)
    for (const bad of [-1, Number.NaN, 400 * 24 * 3_600_000]) await expect(table.fetch('bad', (_id, c) => (c.setTtl(bad), 'x'))).rejects.toThrow(RangeError)
    await expect(table.fetch('bad', (_id, c) => (c.setTtl('1s' as never), 'x'))).rejects.toThrow(TypeError)
    await table.close()
  })

  it('forceRefresh ignores a live row and the live L2 entry (read for its version), counts a miss, and its answer replaces the row', async () => {
    const clock = manualClock(0)
    const l2 = memoryL2({ clock })
    const table = createTable<string | undefined>({ name: 'f', clock, l2 })
    expect(await table.fetch('k', () => 'v1')).toBe('v1')
    let l2Reads = 0
    const get = l2.get.bind(l2)
    l2.get = (...args) => (l2Reads++, get(...args))
    expect(await table.fetch('k', () => 'v2', { forceRefresh: true })).toBe('v2')
    expect(l2Reads).toBe(1)
    expect(await table.fetch('k', () => 'never')).toBe('v2')
    expect(table.stats()).toMatchObject({ misses: 2, hits: 1, loads: 2 })
    await expect(table.fetch('k', () => 'x', { forceRefresh: 'yes' as never })).rejects.toThrow(/option "forceRefresh" must be a boolean/)
    await table.close()
  })

  it('forced refreshes of one id coalesce onto one flight', async () => {
    const table = createTable<string | undefined>({ clock: manualClock() })
    await table.fetch('k', () => 'v1')
    const origin = latchedLoader<string>()
    const answers = [table.fetch('k', origin.loader, { forceRefresh: true }), table.fetch('k', origin.loader, { forceRefresh: true })]
    await settle()
    origin.only().resolve('v2')
    expect(await Promise.all(answers)).toEqual(['v2', 'v2'])
    expect(table.stats()).toMatchObject({ flights: 2, coalesced: 1 })
    await table.close()
  })
})
