/**
 * The defaults of the table's options, as the README's option table gives them: each one observed
 * on a table made without that option (a manual clock aside, and `random` where jitter matters), at
 * the millisecond or the id where it binds, and one step before.
 */
import { describe, expect, it } from 'vitest'
import { type Id, LoadTimeoutError, createTable, memoryL2 } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { advanceSettled, latchedLoader, outcome, settle } from './support/latch.js'

describe('ttl and jitter', () => {
  it('ttl defaults to 60,000 ms: with jitter 0 a row is live at 59,999 and expired at 60,000', async () => {
    const clock = manualClock(0)
    const table = createTable<string>({ jitter: 0, sweepInterval: 1e9, clock })
    await table.fetch('a', () => 'A')
    clock.set(59_999)
    expect(table.has('a')).toBe(true)
    clock.set(60_000)
    expect(table.has('a')).toBe(false)
    await table.close()
  })

  it('jitter defaults to 0.1: with ttl 1,000 the earliest draw expires a row at 900, not before', async () => {
    const clock = manualClock(0)
    const table = createTable<string>({ ttl: 1_000, random: () => 0, sweepInterval: 1e9, clock })
    await table.fetch('a', () => 'A')
    clock.set(899)
    expect(table.has('a')).toBe(true)
    clock.set(900) // 1,000 − trunc(1,000 × 0.1)
    expect(table.has('a')).toBe(false)
    await table.close()
  })

  it('both defaults together: the earliest draw expires a row at 60,000 − 6,000 = 54,000', async () => {
    const clock = manualClock(0)
    const table = createTable<string>({ random: () => 0, sweepInterval: 1e9, clock })
    await table.fetch('a', () => 'A')
    clock.set(53_999)
    expect(table.has('a')).toBe(true)
    clock.set(54_000)
    expect(table.has('a')).toBe(false)
    await table.close()
  })
})

describe('capacity', () => {
  it('defaults to 100,000 rows: 100,000 ids are all held, and the 100,001st evicts a row or is refused, never held beside them', async () => {
    const table = createTable<number, Id>({ sweepInterval: 1e9, clock: manualClock(0) })
    await Promise.all(Array.from({ length: 100_000 }, (_, i) => table.put(i, i)))
    expect(table.stats()).toMatchObject({ size: 100_000, evictions: 0, full_skips: 0 })
    await table.put(100_000, 100_000)
    const { size, evictions, full_skips } = table.stats()
    expect(size).toBe(100_000)
    expect(evictions + full_skips).toBe(1)
    await table.close()
  })
})

describe('sweepInterval', () => {
  it('defaults to 1,000 ms: no sweep at 999, the first at 1,000 reclaims an expired row', async () => {
    const clock = manualClock(0)
    const table = createTable<string>({ ttl: 10, jitter: 0, clock })
    await table.fetch('a', () => 'A')
    clock.advance(999)
    expect(table.stats()).toMatchObject({ sweeps: 0, swept: 0, size: 1 })
    clock.advance(1)
    expect(table.stats()).toMatchObject({ sweeps: 1, swept: 1, size: 0 })
    await table.close()
  })
})

describe('loadTimeout', () => {
  it('defaults to 30,000 ms: a flight still loading at 29,999 is waited for; at 30,000 its waiter gets LoadTimeoutError', async () => {
    const clock = manualClock(0)
    const table = createTable<string>({ sweepInterval: 1e9, clock })
    const origin = latchedLoader<string>()
    const waiter = outcome(table.fetch('a', origin.loader))
    await settle()
    clock.advance(29_999)
    await settle()
    expect(waiter.state).toBe('pending')
    expect(origin.only().context.signal.aborted).toBe(false)
    clock.advance(1)
    await settle()
    expect(waiter.state).toBe('rejected')
    expect(waiter.error).toBeInstanceOf(LoadTimeoutError)
    expect(waiter.error).toMatchObject({ loadTimeout: 30_000 })
    expect(origin.only().context.signal.aborted).toBe(true)
    await table.close()
  })
})

describe('graceBackoff', () => {
  const failing = (counter: { loads: number }) => () => {
    counter.loads++
    throw new Error('origin down')
  }

  it('defaults to 5,000 ms when ttl is longer: the origin is left alone until 5,000 ms after the absorbed failure', async () => {
    const clock = manualClock(0)
    const table = createTable<string>({ ttl: 100_000, jitter: 0, grace: 1_000_000, sweepInterval: 1e9, clock })
    await table.fetch('a', () => 'v1')
    clock.set(100_000)
    const counter = { loads: 0 }
    expect(await table.fetch('a', failing(counter))).toBe('v1') // the fail-safe absorbs it: the back-off starts
    expect(counter.loads).toBe(1)
    clock.set(104_999)
    expect(await table.fetch('a', failing(counter))).toBe('v1')
    expect(counter.loads).toBe(1) // answered from the back-off
    clock.set(105_000)
    expect(await table.fetch('a', failing(counter))).toBe('v1')
    expect(counter.loads).toBe(2)
    expect(table.stats()).toMatchObject({ failsafe: 2, load_errors: 2 })
    await table.close()
  })

  it('defaults to ttl when ttl is under 5,000 ms', async () => {
    const clock = manualClock(0)
    const table = createTable<string>({ ttl: 2_000, jitter: 0, grace: 1_000_000, sweepInterval: 1e9, clock })
    await table.fetch('a', () => 'v1')
    clock.set(2_000)
    const counter = { loads: 0 }
    expect(await table.fetch('a', failing(counter))).toBe('v1')
    clock.set(3_999)
    expect(await table.fetch('a', failing(counter))).toBe('v1')
    expect(counter.loads).toBe(1)
    clock.set(4_000)
    expect(await table.fetch('a', failing(counter))).toBe('v1')
    expect(counter.loads).toBe(2)
    await table.close()
  })
})

describe('maxBatchSize', () => {
  it('defaults to 1,000: 2,500 ids missed in one tick go to the batch loader as calls of 1,000, 1,000 and 500', async () => {
    const calls: number[] = []
    const table = createTable<number, number>({ clock: manualClock(0), batchLoader: (ids) => (calls.push(ids.length), ids.map((id) => id * 2)) })
    const ids = Array.from({ length: 2_500 }, (_, i) => i)
    expect(await table.getMany(ids)).toEqual(ids.map((id) => id * 2))
    expect(calls).toEqual([1_000, 1_000, 500])
    expect(table.stats()).toMatchObject({ batch_loads: 3, batch_ids: 2_500 })
    await table.close()
  })
})

describe('lease', () => {
  const NAME = 'leased'

  // The lease's lifetime is read on the store's own clock, which alone moves: the table's stands
  // still, so no flight bound of the holder (its loadTimeout) can end the lease first.
  for (const [loadTimeout, ttl] of [
    [undefined, 3_000],
    [4_000, 3_000],
    [1_000, 1_000],
  ] as const) {
    it(`ttl defaults to min(loadTimeout, 3,000): with loadTimeout ${loadTimeout ?? 'left at its default'}, the lease a holder takes lasts ${ttl} ms`, async () => {
      const clock = manualClock(0)
      const storeClock = manualClock(0)
      const store = memoryL2({ clock: storeClock })
      const holder = createTable<string>({ name: NAME, clock, l2: store, lease: true, sweepInterval: 1e9, ...(loadTimeout !== undefined && { loadTimeout }) })
      const origin = latchedLoader<string>()
      const answer = outcome(holder.fetch('hot', origin.loader))
      await settle()
      await settle()
      expect(origin.calls).toHaveLength(1)
      expect(holder.stats().lease_acquired).toBe(1)
      storeClock.set(ttl - 1)
      expect(await store.leases!.holder!(NAME, 'hot')).toEqual(expect.any(String))
      storeClock.set(ttl)
      expect(await store.leases!.holder!(NAME, 'hot')).toBeUndefined()
      origin.only().resolve('v')
      await settle()
      expect(answer.value).toBe('v')
      await holder.close()
      await store.close()
    })
  }

  // Two processes on one L2: the first holds the id's lease longer than the second will wait.
  for (const [loadTimeout, wait] of [
    [undefined, 6_000],
    [1_000, 2_000],
  ] as const) {
    it(`wait defaults to twice the lease ttl: with loadTimeout ${loadTimeout ?? 'left at its default'}, a waiter loads itself at ${wait} ms, not before`, async () => {
      const clock = manualClock(0)
      const store = memoryL2({ clock })
      const holder = createTable<string>({ name: NAME, clock, l2: store, lease: { ttl: 1_000_000 }, loadTimeout: 1_000_000, sweepInterval: 1e9 })
      const waiter = createTable<string>({ name: NAME, clock, l2: store, lease: true, sweepInterval: 1e9, ...(loadTimeout !== undefined && { loadTimeout }) })
      const held = latchedLoader<string>()
      const holding = outcome(holder.fetch('hot', held.loader))
      await settle()
      await settle()
      expect(holder.stats().lease_acquired).toBe(1)
      const own = latchedLoader<string>()
      const answer = outcome(waiter.fetch('hot', own.loader))
      await settle()
      await advanceSettled(clock, wait - 1)
      expect(own.calls).toHaveLength(0)
      await advanceSettled(clock, 1)
      expect(own.calls).toHaveLength(1)
      own.only().resolve('own load')
      await settle()
      expect(answer.value).toBe('own load')
      expect(waiter.stats()).toMatchObject({ lease_lost: 1, loads: 1, lease_acquired: 0, lease_waited: 0 })
      held.only().resolve('held')
      await settle()
      expect(holding.value).toBe('held')
      await Promise.all([holder.close(), waiter.close()])
      await store.close()
    })
  }
})
