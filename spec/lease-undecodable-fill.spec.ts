/**
 * A lease waiter whose holder filled an entry this process cannot decode (a rolling deploy that
 * changes `codec`, or a value `jsonCodec` encodes but refuses to decode: an own `__proto__` key, as
 * `JSON.parse` of outside data gives) takes the lease the holder gave back and loads at once: the
 * store's `readOrAcquire` saw a fill and asked for no lease, and that fill is a miss here. It does
 * not look again at the same entry until its `wait` runs out. On Redis, under a prefix of its own.
 */ import { expect, it } from 'vitest'
import { type Codec, jsonCodec, v8Codec } from '../src/store.js'
import { createTable, localBus } from '../src/index.js'
import { redisL2 } from '../src/redis.js'
import { manualClock } from '../src/testing.js'
import { REDIS_URL, describeRedis, suiteRedis, testPrefix } from './support/redis.js'
import { latchedLoader, outcome, settle } from './support/latch.js'

const prefix = testPrefix('lease-undecodable-fill')

/** Turns of the event loop until `cond` holds (Redis answers arrive as I/O); no timers. */
async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 10_000 && !cond(); i++) await settle()
  expect(cond()).toBe(true)
}

/** A redisL2 whose `readOrAcquire` calls are counted (each is one look of a waiter). */
function counted(codec: Codec, space: string) {
  const store = redisL2({ url: REDIS_URL, prefix: space, codec })
  const looks = { n: 0, answered: 0 }
  const leases = store.leases!
  const readOrAcquire = (...args: Parameters<NonNullable<typeof leases.readOrAcquire>>) => {
    looks.n++
    return leases.readOrAcquire!(...args).finally(() => looks.answered++)
  }
  return { store: { ...store, leases: { ...leases, readOrAcquire } }, looks, close: () => store.close() }
}

async function waiterAfterFill(codecA: Codec, codecB: Codec, value: unknown, space: string) {
  const clock = manualClock(Date.UTC(2026, 0, 1))
  const bus = localBus()
  const lease = { ttl: 1_000, wait: 10_000 }
  const A = counted(codecA, space)
  const B = counted(codecB, space)
  const a = createTable<unknown>({ name: 't', clock, l2: A.store, bus, lease, sweepInterval: 1e9 })
  const b = createTable<unknown>({ name: 't', clock, l2: B.store, bus, lease, sweepInterval: 1e9 })
  const la = latchedLoader<unknown>()
  const lb = latchedLoader<unknown>()
  const fromA = outcome(a.fetch('k', la.loader))
  await until(() => la.calls.length === 1) // A holds the lease
  const fromB = outcome(b.fetch('k', lb.loader))
  await until(() => B.looks.answered === 1) // B found it busy: it waits
  la.only().resolve(value) // A writes its fill, gives the lease back, announces `fill`: B looks at once
  await until(() => fromA.state === 'fulfilled' && B.looks.answered === 2)
  // B's own looks, 25 ms then 50 ms apart, far inside `wait`: let four of them happen.
  for (const target = B.looks.n + 4; B.looks.n < target && lb.calls.length === 0; ) {
    const seen = B.looks.n
    clock.set(clock.nextDue()!) // B's next look (no L2 call is in flight now)
    await until(() => (B.looks.n > seen && B.looks.answered === B.looks.n) || lb.calls.length > 0)
    await settle()
  }
  await settle()
  // The fill is a miss to B and the lease is free: B took it and loaded within those looks.
  const loadedInTime = lb.calls.length
  clock.advance(lease.wait)
  await until(() => lb.calls.length === 1)
  lb.only().resolve('b')
  await until(() => fromB.state !== 'pending')
  await Promise.all([a.close(), b.close()])
  await Promise.all([A.close(), B.close()])
  return loadedInTime
}

describeRedis('a lease waiter whose holder filled an entry it cannot decode', () => {
  suiteRedis(prefix)

  it('rolling deploy json → v8: a waiter whose holder filled in the other codec loads at once', async () => {
    expect(await waiterAfterFill(jsonCodec, v8Codec, { n: 1 }, `${prefix}codec:`)).toBe(1)
  })

  it('one codec: a waiter whose holder filled a value with an own __proto__ key loads at once', async () => {
    expect(await waiterAfterFill(jsonCodec, jsonCodec, JSON.parse('{"__proto__":{"admin":true},"name":"x"}'), `${prefix}proto:`)).toBe(1)
  })
})
