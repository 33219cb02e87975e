/**
 * One circuit breaker per shard of the store (`L2Store.shard`, a Redis Cluster master): failures on
 * one shard open its breaker only; ids on the other shards keep their L2 hits; a store without
 * shards keeps one breaker; a timeout carries the store's `cause`.
 */
import { describe, expect, it } from 'vitest'
import { BREAKER_COOLDOWN, BREAKER_FAILURES } from '../src/limits.js'
import { createTable, memoryL2, type Id } from '../src/index.js'
import type { L2Store } from '../src/store.js'
import { manualClock } from '../src/testing.js'
import { settle } from './support/latch.js'

/** A memoryL2 whose ids are on shard `down` (failing) or `up` by their first letter, counting the calls per shard. */
function shardedStore(clock: ReturnType<typeof manualClock>, sharded = true) {
  const inner = memoryL2({ clock })
  const calls = { up: 0, down: 0 }
  const shardOf = (id: Id) => (String(id).startsWith('d') ? 'down' : 'up')
  const store: L2Store = {
    get: (table, id) => {
      calls[shardOf(id)]++
      return shardOf(id) === 'down' ? Promise.reject(new Error('node down')) : inner.get(table, id)
    },
    set: (table, id, entry) => (shardOf(id) === 'down' ? Promise.reject(new Error('node down')) : inner.set(table, id, entry)),
    nextVersion: (table, id, floor) => inner.nextVersion(table, id, floor),
    clear: (table) => inner.clear(table),
    close: () => inner.close(),
    ...(sharded && { shard: (_table: string, id: Id) => shardOf(id) }),
  }
  return { store, calls }
}

describe('a breaker per shard', () => {
  it(`${BREAKER_FAILURES} failures on one shard skip L2 for its ids only; the other shard's ids keep their L2 hits`, async () => {
    const clock = manualClock(0)
    const { store, calls } = shardedStore(clock)
    const writer = createTable<string>({ name: 't', ttl: 600_000, clock, l2: store, sweepInterval: 1e9 })
    for (const id of ['u1', 'u2', 'u3']) await writer.fetch(id, () => `${id} stored`)
    const reader = createTable<string>({ name: 't', ttl: 600_000, clock, l2: store, sweepInterval: 1e9 })
    for (let i = 0; i < BREAKER_FAILURES + 3; i++) await reader.fetch(`d${i}`, () => 'loaded')
    const downCalls = calls.down
    expect(reader.stats().l2_skipped).toBeGreaterThan(0)
    expect(await Promise.all(['u1', 'u2', 'u3'].map((id) => reader.fetch(id, () => 'loaded again')))).toEqual(['u1 stored', 'u2 stored', 'u3 stored'])
    expect(reader.stats().l2_hits).toBe(3)
    await reader.fetch('d-more', () => 'loaded')
    expect(calls.down).toBe(downCalls) // still skipped
    clock.advance(BREAKER_COOLDOWN)
    await reader.fetch('d-probe', () => 'loaded')
    expect(calls.down).toBe(downCalls + 1) // the cooldown over, one probe
    await Promise.all([writer.close(), reader.close()])
  })

  it('a store without shards keeps one breaker: the failures open it for every id', async () => {
    const clock = manualClock(0)
    const { store } = shardedStore(clock, false)
    const writer = createTable<string>({ name: 't', ttl: 600_000, clock, l2: store, sweepInterval: 1e9 })
    await writer.fetch('u1', () => 'u1 stored')
    const reader = createTable<string>({ name: 't', ttl: 600_000, clock, l2: store, sweepInterval: 1e9 })
    for (let i = 0; i < BREAKER_FAILURES; i++) await reader.fetch(`d${i}`, () => 'loaded')
    expect(await reader.fetch('u1', () => 'loaded again')).toBe('loaded again')
    expect(reader.stats().l2_hits).toBe(0)
    await Promise.all([writer.close(), reader.close()])
  })

  it("a timeout's error carries the store's cause, and ends its message with it", async () => {
    const clock = manualClock(0)
    const refused = Object.assign(new Error('connect ECONNREFUSED 10.0.0.7:6379'), { code: 'ECONNREFUSED' })
    const store: L2Store = {
      get: () => new Promise(() => {}),
      set: () => new Promise(() => {}),
      nextVersion: () => new Promise(() => {}),
      clear: async () => {},
      close: async () => {},
      cause: () => refused,
    }
    const table = createTable<string>({ name: 't', ttl: 1_000, clock, l2: store, sweepInterval: 1e9 })
    const errors: unknown[] = []
    table.events.on('l2_error', (event) => errors.push(event.error))
    const answer = table.fetch('a', () => 'from the origin')
    await settle()
    clock.advance(1_000)
    await settle()
    expect(await answer).toBe('from the origin')
    expect(errors[0]).toMatchObject({ code: 'ECHOSTORE_L2_TIMEOUT', cause: refused })
    expect((errors[0] as Error).message).toMatch(/took longer than 50 ms: connect ECONNREFUSED 10\.0\.0\.7:6379$/)
    await table.close()
  })
})
