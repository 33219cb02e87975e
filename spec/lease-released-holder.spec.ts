/**
 * A lease holder whose flight is released (its last caller left by cancellation, or its bound
 * passed) gives the id's lease back at once and says so, while its loader still runs: it will write
 * no fill, so another process takes over now, not when the loader returns or the lease's ttl runs
 * out (a loader that ignores its signal would otherwise hold it that long). The same for every id of
 * a batch whose flights were all released, and on Redis no lease key is left behind.
 */ import { Redis } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { type Id, createTable, localBus, memoryL2 } from '../src/index.js'
import { redisL2 } from '../src/redis.js'
import { manualClock } from '../src/testing.js'
import { leaseKey } from '../src/l2/keys.js'
import { advanceSettled, latchedBatchLoader, latchedLoader, outcome, settle } from './support/latch.js'
import { REDIS_URL, cleanPrefix, describeRedis, testPrefix } from './support/redis.js'

const NAME = 'leases'

function twoProcesses() {
  const clock = manualClock(0)
  const store = memoryL2({ clock })
  const bus = localBus()
  const make = () => createTable<string | undefined, Id>({ name: NAME, clock, l2: store, bus, lease: { ttl: 3_000, wait: 6_000 }, loadTimeout: 10_000, jitter: 0, sweepInterval: 1e9 })
  return { clock, store, bus, a: make(), b: make() }
}

describe('a lease holder whose flight was abandoned', () => {
  it('gives its lease back at once, so another process loads without waiting out the ttl', async () => {
    const { clock, store, a, b } = twoProcesses()
    const hanging = latchedLoader<string>() // never reads its signal
    const leaving = new AbortController()
    const first = outcome(a.fetch('k', hanging.loader, { signal: leaving.signal }))
    await settle()
    await settle()
    expect(a.stats().lease_acquired).toBe(1)
    leaving.abort(new Error('client went away'))
    await settle()
    expect(first.state).toBe('rejected')
    expect(a.stats()).toMatchObject({ abandoned: 1, inflight: 0 })
    expect(hanging.only().context.signal.aborted).toBe(true)

    // The flight is released: nobody should hold the lease now.
    expect.soft(await store.leases!.acquire(NAME, 'k', 'probe', 1)).toBe(true)
    await store.leases!.release(NAME, 'k', 'probe') // harmless when the probe did not get it

    const other = latchedLoader<string>()
    const second = outcome(b.fetch('k', other.loader))
    await advanceSettled(clock, 100)
    expect.soft(other.calls).toHaveLength(1)
    other.calls[0]?.resolve('from b')
    hanging.only().resolve('late')
    await advanceSettled(clock, 3_100)
    expect(second.state).toBe('fulfilled')
    await Promise.all([a.close(), b.close()])
  })

  it('the same in a batch: ids whose flights were all released give their leases back while the batch loader runs', async () => {
    const { store, a } = twoProcesses()
    const hanging = latchedBatchLoader<string | undefined>()
    const leaving = new AbortController()
    const page = outcome(a.fetchMany(['x', 'y'], hanging.loader, { signal: leaving.signal }))
    await settle()
    await settle()
    expect(hanging.only().ids).toEqual(['x', 'y'])
    leaving.abort(new Error('client went away'))
    await settle()
    expect(page.state).toBe('rejected')
    expect(hanging.only().context.signal.aborted).toBe(true)
    expect(await store.leases!.acquireMany!(NAME, ['x', 'y'], 'probe', 1)).toEqual([true, true])
    hanging.only().resolve(['late x', 'late y'])
    await settle()
    await a.close()
  })
})

describeRedis('a lease holder whose flight was abandoned, on Redis', () => {
  it('leaves no lease key behind once its flight is released', async () => {
    const prefix = testPrefix('released-lease-holder')
    const client = new Redis(REDIS_URL)
    await client.ping() // ready: a call on a client that is not ready fails at once (a local load, no lease)
    const table = createTable<string | undefined>({ name: NAME, clock: manualClock(0), l2: redisL2({ client, prefix }), lease: { ttl: 3_000 }, jitter: 0, sweepInterval: 1e9 })
    const hanging = latchedLoader<string>()
    try {
      const leaving = new AbortController()
      const first = outcome(table.fetch('k', hanging.loader, { signal: leaving.signal }))
      for (let i = 0; i < 50 && hanging.calls.length === 0; i++) await client.ping() // real I/O: the lease script's round trip
      expect(hanging.calls).toHaveLength(1)
      expect(table.stats().lease_acquired).toBe(1)
      expect(await client.get(leaseKey(prefix, NAME, 'k'))).not.toBeNull()
      leaving.abort(new Error('client went away'))
      await settle()
      await settle()
      expect(first.state).toBe('rejected')
      expect(table.stats()).toMatchObject({ abandoned: 1, inflight: 0 })
      await client.ping() // same connection: a release issued by now has been applied
      expect(await client.get(leaseKey(prefix, NAME, 'k'))).toBeNull()
    } finally {
      for (const call of hanging.calls) call.resolve('late')
      await settle()
      await table.close()
      await cleanPrefix(client, prefix)
      client.disconnect()
    }
  })
})
