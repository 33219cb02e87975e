/**
 * The `diagnostics_channel` channels: `echostore:fetch`, `echostore:load` and `echostore:l2` are
 * tracing channels whose contexts carry exactly the fields named for them; `echostore:bus` is a plain
 * channel with one message per message published, received or refused, and per gap. Without a
 * subscriber nothing is published, and the plain path is the untraced one.
 */
import { channel, tracingChannel } from 'node:diagnostics_channel'
import { afterEach, describe, expect, it } from 'vitest'
import { type Id, createTable, localBus, memoryL2 } from '../src/index.js'
import type { Bus, BusDelivery } from '../src/store.js'
import { redisL2 } from '../src/redis.js'
import { chaosL2, manualClock } from '../src/testing.js'
import { advanceSettled, latchedLoader, outcome, settle } from './support/latch.js'
import { REDIS_URL, cleanPrefix, describeRedis, testPrefix } from './support/redis.js'
import { Redis } from 'ioredis'

type Event = 'start' | 'end' | 'asyncStart' | 'asyncEnd' | 'error'
const EVENTS: readonly Event[] = ['start', 'end', 'asyncStart', 'asyncEnd', 'error']

/** Every event of a tracing channel, with a copy of its context as it was then; `stop()` unsubscribes. */
function record(name: string) {
  const traced = tracingChannel(name)
  const seen: { event: Event; context: Record<string, unknown>; same: object }[] = []
  const handlers = Object.fromEntries(EVENTS.map((event) => [event, (context: object) => seen.push({ event, context: { ...context }, same: context })])) as never
  traced.subscribe(handlers)
  return {
    seen,
    /** The contexts at `asyncEnd`, in order. */
    ended: () => seen.filter((e) => e.event === 'asyncEnd').map((e) => e.context),
    events: () => seen.map((e) => e.event),
    stop: () => traced.unsubscribe(handlers),
  }
}

const stops: (() => void)[] = []
afterEach(() => stops.splice(0).forEach((stop) => stop()))
function recording(name: string) {
  const recorder = record(name)
  stops.push(recorder.stop)
  return recorder
}

describe('echostore:fetch', () => {
  it('a hit: start, end, asyncStart, asyncEnd on one context holding exactly table, id, outcome "hit" and result', async () => {
    const users = createTable<string>({ name: 'users' })
    await users.put('ada', 'Ada')
    const fetches = recording('echostore:fetch')
    expect(await users.fetch('ada', () => 'never')).toBe('Ada')
    expect(fetches.events()).toEqual(['start', 'end', 'asyncStart', 'asyncEnd'])
    expect(new Set(fetches.seen.map((e) => e.same)).size).toBe(1)
    expect(fetches.seen[0]!.context).toEqual({ table: 'users', id: 'ada' })
    expect(fetches.ended()).toEqual([{ table: 'users', id: 'ada', outcome: 'hit', result: 'Ada' }])
    await users.close()
  })

  it('a negative row: outcome "negative"', async () => {
    const users = createTable<string | undefined, Id>({ name: 'users' })
    await users.put(7, undefined)
    const fetches = recording('echostore:fetch')
    expect(await users.fetch(7, () => 'never')).toBeUndefined()
    expect(fetches.ended()).toEqual([{ table: 'users', id: 7, outcome: 'negative', result: undefined }])
    await users.close()
  })

  it('a herd: the caller that started the flight is "miss", the others "coalesced", each with the one answer', async () => {
    const users = createTable<{ name: string }>({ name: 'users' })
    const fetches = recording('echostore:fetch')
    const origin = latchedLoader<{ name: string }>()
    const herd = Array.from({ length: 4 }, () => outcome(users.fetch('ada', origin.loader)))
    await settle()
    const ada = { name: 'Ada' }
    origin.only().resolve(ada)
    await settle()
    expect(herd.every((caller) => caller.value === ada)).toBe(true)
    const outcomes = fetches.ended().map((c) => c.outcome)
    expect(outcomes.sort()).toEqual(['coalesced', 'coalesced', 'coalesced', 'miss'])
    expect(fetches.ended().every((c) => c.result === ada && c.table === 'users' && c.id === 'ada')).toBe(true)
    expect(users.stats()).toMatchObject({ misses: 4, coalesced: 3, flights: 1, loads: 1 })
    await users.close()
  })

  it('a caller with its own deadline that joins a flight is "coalesced"; one that leaves by its deadline is "error"', async () => {
    const clock = manualClock(0)
    const users = createTable<string>({ name: 'users', clock })
    const fetches = recording('echostore:fetch')
    const origin = latchedLoader<string>()
    const first = outcome(users.fetch('ada', origin.loader))
    const joiner = outcome(users.fetch('ada', origin.loader, { timeout: 1_000 }))
    const leaver = outcome(users.fetch('ada', origin.loader, { timeout: 10 }))
    await settle()
    await advanceSettled(clock, 10)
    expect(leaver.state).toBe('rejected')
    origin.only().resolve('Ada')
    await settle()
    expect([first.value, joiner.value]).toEqual(['Ada', 'Ada'])
    const byOutcome = fetches.ended().map((c) => c.outcome)
    expect(byOutcome).toEqual(['error', 'miss', 'coalesced'])
    expect(fetches.ended()[0]!.error).toBe(leaver.error)
    await users.close()
  })

  it('stale-while-revalidate and the fail-safe answer "stale"', async () => {
    const clock = manualClock(0)
    const swr = createTable<string>({ name: 'swr', ttl: 100, jitter: 0, grace: 10_000, staleWhileRevalidate: true, clock })
    const failsafe = createTable<string>({ name: 'failsafe', ttl: 100, jitter: 0, grace: 10_000, clock })
    await swr.put('ada', 'old')
    await failsafe.put('ada', 'old')
    clock.advance(200)
    const fetches = recording('echostore:fetch')
    expect(await swr.fetch('ada', () => 'new')).toBe('old')
    expect(await failsafe.fetch('ada', () => Promise.reject(new Error('origin down')))).toBe('old')
    expect(fetches.ended().map((c) => [c.table, c.outcome])).toEqual([
      ['swr', 'stale'],
      ['failsafe', 'stale'],
    ])
    await settle()
    await Promise.all([swr.close(), failsafe.close()])
  })

  it("a soft timeout (the table's, or a caller's own) and the fail-safe's back-off answer \"stale\"", async () => {
    const clock = manualClock(0)
    const users = createTable<string>({ name: 'users', ttl: 100, jitter: 0, grace: 10_000, softTimeout: 50, graceBackoff: 1_000, clock })
    await users.put('ada', 'old')
    await users.put('bob', 'old')
    clock.advance(200)
    const fetches = recording('echostore:fetch')
    const origin = latchedLoader<string>()
    const soft = outcome(users.fetch('ada', origin.loader)) // the table's soft timeout answers the flight's callers
    const own = outcome(users.fetch('bob', origin.loader, { softTimeout: 10 })) // this caller's own
    await settle()
    await advanceSettled(clock, 50)
    expect([soft.value, own.value]).toEqual(['old', 'old'])
    expect(fetches.ended().map((c) => [c.id, c.outcome])).toEqual([
      ['bob', 'stale'],
      ['ada', 'stale'],
    ])
    for (const call of origin.calls) call.reject(new Error('origin down')) // the fail-safe absorbs both, then backs off
    await settle()
    expect(await users.fetch('ada', origin.loader)).toBe('old')
    expect(fetches.ended().at(-1)).toMatchObject({ id: 'ada', outcome: 'stale', result: 'old' })
    expect(origin.calls).toHaveLength(2)
    await users.close()
  })

  it('a loader that throws: outcome "error", the error on the context and on the error event', async () => {
    const users = createTable<string>({ name: 'users' })
    const fetches = recording('echostore:fetch')
    const boom = new Error('origin down')
    await expect(
      users.fetch('ada', () => {
        throw boom
      }),
    ).rejects.toBe(boom)
    expect(fetches.events()).toEqual(['start', 'end', 'error', 'asyncStart', 'asyncEnd'])
    expect(fetches.ended()).toEqual([{ table: 'users', id: 'ada', outcome: 'error', error: boom }])
    await users.close()
  })

  it('bad input rejects as without a subscriber, with outcome "error"', async () => {
    const users = createTable<string>({ name: 'users' })
    const fetches = recording('echostore:fetch')
    await expect(users.fetch({} as never, () => 'x')).rejects.toThrow(TypeError)
    await expect(users.fetch('ada', () => 'x', { tiemout: 5 } as never)).rejects.toThrow(/unknown option "tiemout"/)
    expect(fetches.ended().map((c) => c.outcome)).toEqual(['error', 'error'])
    await users.close()
  })

  it('without a subscriber nothing is published and plain callers of a cold id share one promise; with one, each has its own', async () => {
    const users = createTable<string>({ name: 'users' })
    const origin = latchedLoader<string>()
    const a = users.fetch('ada', origin.loader)
    const b = users.fetch('ada', origin.loader)
    expect(a).toBe(b)
    const fetches = recording('echostore:fetch')
    const c = users.fetch('bob', origin.loader)
    const d = users.fetch('bob', origin.loader)
    expect(c).not.toBe(d)
    await settle()
    for (const call of origin.calls) call.resolve(String(call.id))
    expect(await Promise.all([a, b, c, d])).toEqual(['ada', 'ada', 'bob', 'bob'])
    expect(fetches.ended().map((e) => e.id)).toEqual(['bob', 'bob'])
    await users.close()
  })
})

describe('echostore:fetch around get, fetchMany and getMany', () => {
  it('get: table and id; fetchMany and getMany: table and ids, with the outcome of the ids together', async () => {
    const users = createTable<string>({ name: 'users', batchLoader: (ids) => ids.map((id) => id.toUpperCase()) })
    await users.put('ada', 'Ada')
    const fetches = recording('echostore:fetch')
    expect(await users.get('ada')).toBe('Ada')
    expect(await users.getMany(['ada'])).toEqual(['Ada'])
    expect(await users.fetchMany(['ada', 'bob'], (ids) => ids.map((id) => id.toUpperCase()))).toEqual(['Ada', 'BOB'])
    expect(await users.getMany(['bob', 'cy'])).toEqual(['BOB', 'CY'])
    expect(fetches.seen.filter((e) => e.event === 'start').map((e) => e.context)).toEqual([
      { table: 'users', id: 'ada' },
      { table: 'users', ids: ['ada'] },
      { table: 'users', ids: ['ada', 'bob'] },
      { table: 'users', ids: ['bob', 'cy'] },
    ])
    expect(fetches.ended().map((c) => c.outcome)).toEqual(['hit', 'hit', 'miss', 'miss'])
    expect(fetches.ended()[2]!.result).toEqual(['Ada', 'BOB'])
    await users.close()
  })

  it('a batch read whose ids all joined flights in progress is "coalesced"; one that failed is "error"', async () => {
    const users = createTable<string>({ name: 'users' })
    const origin = latchedLoader<string>()
    const fetches = recording('echostore:fetch')
    const single = outcome(users.fetch('ada', origin.loader))
    const many = outcome(users.fetchMany(['ada'], () => ['never']))
    await settle()
    origin.only().resolve('Ada')
    await settle()
    expect(many.value).toEqual(['Ada'])
    const boom = new Error('batch down')
    await expect(users.fetchMany(['x', 'y'], () => Promise.reject(boom))).rejects.toBe(boom)
    expect(single.value).toBe('Ada')
    expect(fetches.ended().map((c) => [c.id ?? c.ids, c.outcome])).toEqual([
      ['ada', 'miss'],
      [['ada'], 'coalesced'],
      [['x', 'y'], 'error'],
    ])
    await users.close()
  })
})

describe('echostore:load', () => {
  it('around every loader call: exactly table and id, then result; a throw publishes error', async () => {
    const users = createTable<string, Id>({ name: 'users' })
    const loads = recording('echostore:load')
    await users.fetch('ada', () => 'Ada')
    const boom = new Error('no')
    await expect(users.fetch(7, () => Promise.reject(boom))).rejects.toBe(boom)
    expect(loads.seen.filter((e) => e.event === 'start').map((e) => e.context)).toEqual([
      { table: 'users', id: 'ada' },
      { table: 'users', id: 7 },
    ])
    expect(loads.ended()).toEqual([
      { table: 'users', id: 'ada', result: 'Ada' },
      { table: 'users', id: 7, error: boom },
    ])
    expect(loads.events().filter((e) => e === 'error')).toHaveLength(1)
    await users.close()
  })

  it('around every batch loader call: table and ids', async () => {
    const users = createTable<string>({ name: 'users' })
    const loads = recording('echostore:load')
    await users.fetchMany(['a', 'b', 'c'], (ids) => ids.map((id) => id.toUpperCase()))
    expect(loads.ended()).toEqual([{ table: 'users', ids: ['a', 'b', 'c'], result: ['A', 'B', 'C'] }])
    await users.close()
  })

  it('a herd is one load', async () => {
    const users = createTable<string>({ name: 'users' })
    const loads = recording('echostore:load')
    await Promise.all(Array.from({ length: 10 }, () => users.fetch('ada', () => 'Ada')))
    expect(loads.ended()).toHaveLength(1)
    await users.close()
  })
})

describe('echostore:l2', () => {
  it('around every L2 operation: exactly table and op (get, set, nextVersion, clear, the lease calls), then result', async () => {
    const clock = manualClock(0)
    const l2 = memoryL2({ clock })
    const users = createTable<string>({ name: 'users', l2, lease: true, clock })
    const calls = recording('echostore:l2')
    await users.fetch('ada', () => 'Ada') // leases.readOrAcquire (the read and the lease in one step), leases.setAndRelease (the fill and the lease given back)
    await users.put('bob', 'Bob') // nextVersion, set
    await users.invalidate('bob') // nextVersion, leases.void, set
    await users.clear() // clear
    await settle()
    const starts = calls.seen.filter((e) => e.event === 'start').map((e) => e.context)
    expect(starts.every((c) => Object.keys(c).sort().join() === 'op,table' && c.table === 'users')).toBe(true)
    expect(new Set(starts.map((c) => c.op))).toEqual(new Set(['set', 'nextVersion', 'clear', 'leases.readOrAcquire', 'leases.setAndRelease', 'leases.void']))
    expect(calls.ended()).toHaveLength(starts.length)
    expect(calls.ended().find((c) => c.op === 'leases.readOrAcquire')).toEqual({ table: 'users', op: 'leases.readOrAcquire', result: { entry: undefined, lease: 'taken' } })
    await users.close()
  })

  it('a failed call publishes error with what the store threw; a call past the timeout with L2TimeoutError', async () => {
    const clock = manualClock(0)
    const l2 = chaosL2(memoryL2({ clock }), clock)
    const users = createTable<string>({ name: 'users', l2, clock })
    const calls = recording('echostore:l2')
    const boom = new Error('connection reset')
    l2.fail('get', { kind: 'throw', error: boom }, { times: 1 })
    await users.fetch('ada', () => 'Ada')
    expect(calls.ended()[0]).toEqual({ table: 'users', op: 'get', error: boom })
    l2.fail('get', { kind: 'stall' })
    const slow = outcome(users.fetch('bob', () => 'Bob'))
    await settle()
    await advanceSettled(clock, 50)
    expect(slow.state).toBe('fulfilled')
    const timedOut = calls.ended().find((c) => c.op === 'get' && c.error !== boom)!
    expect((timedOut.error as { code: string }).code).toBe('ECHOSTORE_L2_TIMEOUT')
    l2.heal()
    await settle()
    await users.close()
  })

  it('a call the open breaker skips publishes nothing: no L2 operation happened', async () => {
    const l2 = chaosL2(memoryL2())
    const users = createTable<string>({ name: 'users', l2 })
    const calls = recording('echostore:l2')
    l2.fail('all', { kind: 'throw' })
    for (const id of ['a', 'b', 'c', 'd']) await users.fetch(id, () => id) // get, set, get, set, get: five failures open the breaker
    await settle()
    expect(calls.seen.filter((e) => e.event === 'start')).toHaveLength(5)
    expect(calls.ended().every((c) => c.error !== undefined)).toBe(true)
    expect(users.stats().l2_skipped).toBe(3)
    await users.close()
  })
})

describeRedis('echostore:l2 with Redis', () => {
  it('carries the server address', async () => {
    const prefix = testPrefix('channels')
    const l2 = redisL2({ url: REDIS_URL, prefix })
    const users = createTable<string>({ name: 'users', l2 })
    const calls = recording('echostore:l2')
    await users.fetch('ada', () => 'Ada')
    const { hostname, port } = new URL(REDIS_URL)
    expect(calls.seen.find((e) => e.event === 'start')!.context).toEqual({ table: 'users', op: 'get', address: `${hostname}:${port || 6379}` })
    await users.close()
    await l2.close()
    const client = new Redis(REDIS_URL)
    await cleanPrefix(client, prefix)
    client.disconnect()
  })
})

describe('echostore:bus', () => {
  /** Every message of `echostore:bus`; unsubscribed after the test. */
  function busMessages() {
    const seen: object[] = []
    const listener = (message: unknown) => seen.push(message as object)
    channel('echostore:bus').subscribe(listener)
    stops.push(() => channel('echostore:bus').unsubscribe(listener))
    return seen
  }

  it('a change published by one table and received by another', async () => {
    const bus = localBus()
    const a = createTable<string>({ name: 'users', bus })
    const b = createTable<string>({ name: 'users', bus })
    const seen = busMessages()
    const { version } = await a.put('ada', 'Ada', { version: 5 })
    await settle()
    const message = { table: 'users', id: 'ada', version, kind: 'put', origin: a.origin }
    expect(seen).toEqual([
      { table: 'users', type: 'received', message },
      { table: 'users', type: 'published', message },
    ])
    await Promise.all([a.close(), b.close()])
  })

  it('a message refused as stale or invalid, and a gap', async () => {
    let deliver: ((delivery: BusDelivery) => void) | undefined
    const bus: Bus = { publish: async () => {}, subscribe: (handler) => ((deliver = handler), () => {}), close: async () => {} }
    const users = createTable<string>({ name: 'users', bus })
    const seen = busMessages()
    await users.put('ada', 'Ada', { version: 9 })
    const older = { table: 'users', id: 'ada', version: 3, kind: 'invalidate', origin: 'elsewhere' } as const
    deliver!({ type: 'message', message: older })
    deliver!({ type: 'message', message: { table: 'users', kind: 'nonsense' } as never })
    deliver!({ type: 'gap' })
    await settle()
    expect(seen).toEqual([
      { table: 'users', type: 'published', message: { table: 'users', id: 'ada', version: 9, kind: 'put', origin: users.origin } },
      { table: 'users', type: 'refused', message: older, reason: 'stale' },
      { table: 'users', type: 'refused', reason: 'invalid' },
      { table: 'users', type: 'gap' },
    ])
    await users.close()
  })
})
