/**
 * Leases (the `lease` option) on tables that share one memoryL2, as processes share Redis: a herd
 * across tables costs one load; the others answer from the holder's fill (woken by the bus, or by
 * looking at L2 on their own); a holder that died is taken over after its lease's ttl, once; an
 * invalidate voids the lease and nobody answers the value loaded before it; L2 failing means a
 * local single flight. Deterministic: latched loaders and one manual clock.
 */
import { describe, expect, it } from 'vitest'
import type { L2Store } from '../src/store.js'
import { LoadTimeoutError, type Stats, type Table, type TableOptions, createTable, localBus, memoryL2 } from '../src/index.js'
import { DEFAULT_L2_TIMEOUT } from '../src/limits.js'
import { manualClock } from '../src/testing.js'
import { chaosL2 } from '../src/testing.js'
import { advanceSettled, latchedLoader, outcome, settle } from './support/latch.js'

const NAME = 'catalog'

/** `n` tables named alike on one clock and one L2 (and one bus unless `bus: false`), each a "process". */
function processes(n: number, { withBus = true, l2, ...options }: { withBus?: boolean; l2?: L2Store } & TableOptions = {}) {
  const clock = manualClock(0)
  const store = l2 ?? memoryL2({ clock })
  const local = withBus ? localBus() : undefined
  const tables = Array.from({ length: n }, () =>
    createTable<{ v: string } | undefined>({ name: NAME, ttl: 60_000, jitter: 0, sweepInterval: 1e9, loadTimeout: 1_000, clock, l2: store, lease: true, ...(local && { bus: local }), ...options }),
  )
  const close = async () => {
    await Promise.all(tables.map((t) => t.close()))
    await store.close()
    await local?.close()
  }
  return { clock, store, tables, close }
}

/** The counter laws of leases, for one table. */
function leaseLaws(stats: Stats): void {
  expect(stats.lease_waited).toBeLessThanOrEqual(stats.l2_hits)
  expect(stats.lease_acquired + stats.lease_lost).toBeLessThanOrEqual(stats.loads)
  expect(stats.misses).toBe(stats.flights + stats.coalesced)
  expect(stats.inflight).toBe(0)
}

const sum = <T>(tables: Table<T>[], counter: keyof Stats) => tables.reduce((n, t) => n + t.stats()[counter], 0)

describe('the lease option', () => {
  it('is validated naming it: it needs an L2 with leases; ttl and wait are integers of ms', () => {
    expect(() => createTable({ lease: true })).toThrow(/option "lease" needs an l2 whose store has leases/)
    const { leases: _, ...withoutLeases } = memoryL2()
    expect(() => createTable({ lease: true, l2: withoutLeases })).toThrow(TypeError)
    expect(() => createTable({ lease: { ttl: 0 }, l2: memoryL2() })).toThrow(/option "lease.ttl" must be an integer number of ms/)
    expect(() => createTable({ lease: { wait: 1.5 }, l2: memoryL2() })).toThrow(RangeError)
    expect(() => createTable({ lease: { tll: 5 } as never, l2: memoryL2() })).toThrow(/option "lease": unknown option "tll"/)
    expect(() => createTable({ lease: 'yes' as never, l2: memoryL2() })).toThrow(TypeError)
    void createTable({ lease: false }).close()
    void createTable({ lease: { ttl: 500, wait: 200 }, l2: memoryL2() }).close()
  })
})

describe('a herd across processes with leases', () => {
  it('costs one load; every process answers the one value; the holder counts lease_acquired, the others lease_waited', async () => {
    const { tables, close } = processes(4)
    const origin = latchedLoader<{ v: string }>()
    const answers = tables.flatMap((t) => Array.from({ length: 50 }, () => outcome(t.fetch('hot', origin.loader))))
    await settle()
    await settle()
    expect(origin.calls).toHaveLength(1)
    const loaded = { v: 'the one load' }
    origin.only().resolve(loaded)
    for (let i = 0; i < 5; i++) await settle()
    expect(answers.every((a) => a.state === 'fulfilled' && (a.value as { v: string }).v === 'the one load')).toBe(true)
    expect(sum(tables, 'loads')).toBe(1)
    expect(sum(tables, 'lease_acquired')).toBe(1)
    expect(sum(tables, 'lease_waited')).toBe(3)
    expect(sum(tables, 'lease_lost')).toBe(0)
    for (const t of tables) leaseLaws(t.stats())
    await close()
  })

  it('without a bus, the waiters find the fill by looking at L2 again, 2 ms, then 4, 8 … up to 50 ms apart', async () => {
    const { clock, tables, close } = processes(2, { withBus: false })
    const origin = latchedLoader<{ v: string }>()
    const holder = outcome(tables[0]!.fetch('hot', origin.loader))
    await settle()
    await settle()
    const waiter = outcome(tables[1]!.fetch('hot', origin.loader))
    await settle()
    await advanceSettled(clock, 30) // the waiter looks at 2, 6, 14, 30 ms: nothing yet
    expect(waiter.state).toBe('pending')
    origin.only().resolve({ v: 'filled at 30 ms' })
    await settle()
    expect(holder.state).toBe('fulfilled')
    await advanceSettled(clock, 32) // its next look, at 62 ms
    expect(waiter).toMatchObject({ state: 'fulfilled', value: { v: 'filled at 30 ms' } })
    expect(tables[1]!.stats()).toMatchObject({ loads: 0, lease_waited: 1, l2_hits: 1 })
    await close()
  })

  it('with a bus, a waiter looks at L2 on its own only after 25 ms (the fill message wakes it), and a lost fill message costs it that wait', async () => {
    const clock = manualClock(0)
    const store = memoryL2({ clock })
    const local = localBus()
    let dropFills = false
    const lossy = { ...local, publish: (m: Parameters<typeof local.publish>[0]) => (dropFills && m.kind === 'fill' ? Promise.resolve() : local.publish(m)) }
    const options = { name: NAME, ttl: 60_000, jitter: 0, sweepInterval: 1e9, loadTimeout: 1_000, clock, lease: true, bus: lossy } as const
    const a = createTable<{ v: string } | undefined>({ ...options, l2: store })
    const watched = chaosL2(store, clock) // B's view of the same L2, counting its calls
    const b = createTable<{ v: string } | undefined>({ ...options, l2: watched })
    const origin = latchedLoader<{ v: string }>()
    const fromA = outcome(a.fetch('hot', origin.loader))
    await settle()
    const fromB = outcome(b.fetch('hot', origin.loader))
    await settle()
    const l2Calls = () => Object.values(watched.calls).reduce((n, c) => n + c, 0)
    const afterFirstRead = l2Calls()
    await advanceSettled(clock, 24)
    expect(l2Calls()).toBe(afterFirstRead) // no look of its own yet
    origin.only().resolve({ v: 'filled' })
    for (let i = 0; i < 4; i++) await settle()
    expect(fromB).toMatchObject({ state: 'fulfilled', value: { v: 'filled' } }) // woken by the fill message
    expect(l2Calls()).toBe(afterFirstRead + 1) // one look, on the wake
    // The same with the fill message lost: B finds the fill on its own look at 25 ms.
    dropFills = true
    await a.invalidate('hot')
    for (let i = 0; i < 4; i++) await settle()
    const again = outcome(a.fetch('hot', origin.loader))
    await settle()
    const fromBAgain = outcome(b.fetch('hot', origin.loader))
    await settle()
    origin.calls[1]!.resolve({ v: 'filled again' })
    for (let i = 0; i < 4; i++) await settle()
    expect(again.value).toEqual({ v: 'filled again' })
    expect(fromBAgain.state).toBe('pending')
    await advanceSettled(clock, 25)
    expect(fromBAgain).toMatchObject({ state: 'fulfilled', value: { v: 'filled again' } })
    expect(fromA.value).toEqual({ v: 'filled' })
    expect(origin.calls).toHaveLength(2)
    await Promise.all([a.close(), b.close()])
    await store.close()
    await local.close()
  })

  it('a process that takes the lease just after the holder filled it and let go answers from the fill, not a second load', async () => {
    const clock = manualClock(0)
    const store = memoryL2({ clock })
    const late = chaosL2(store, clock) // process B's view of the same L2
    const options = { name: NAME, ttl: 60_000, jitter: 0, sweepInterval: 1e9, clock, lease: true } as const
    const a = createTable<{ v: string } | undefined>({ ...options, l2: store })
    const b = createTable<{ v: string } | undefined>({ ...options, l2: late })
    const origin = latchedLoader<{ v: string }>()
    late.fail('lease', { kind: 'stall' }, { times: 1 }) // B misses L2, then its lease call is held up
    const fromB = outcome(b.fetch('hot', origin.loader))
    await settle()
    const fromA = outcome(a.fetch('hot', origin.loader))
    for (let i = 0; i < 3; i++) await settle()
    origin.only().resolve({ v: 'one load' })
    for (let i = 0; i < 3; i++) await settle()
    expect(fromA.value).toEqual({ v: 'one load' }) // A filled L2 and let the lease go
    late.heal() // B takes the free lease now, and must find the fill first
    for (let i = 0; i < 4; i++) await settle()
    expect(fromB.value).toEqual({ v: 'one load' })
    expect(origin.calls).toHaveLength(1)
    expect(b.stats()).toMatchObject({ loads: 0, lease_waited: 1, lease_acquired: 0 })
    await Promise.all([a.close(), b.close()])
    await store.close()
  })

  it('a holder that died: after its lease’s ttl one waiter takes over and loads, once; everyone answers', async () => {
    const { clock, store, tables, close } = processes(3, { lease: { ttl: 300, wait: 1_000 } })
    expect(await store.leases!.acquire(NAME, 'hot', 'a process that died', 300)).toBe(true)
    const origin = latchedLoader<{ v: string }>()
    const answers = tables.flatMap((t) => Array.from({ length: 10 }, () => outcome(t.fetch('hot', origin.loader))))
    await settle()
    await advanceSettled(clock, 299)
    expect(origin.calls).toHaveLength(0)
    await advanceSettled(clock, 60) // the dead lease is gone: the next look takes it
    expect(origin.calls).toHaveLength(1)
    origin.only().resolve({ v: 'after the takeover' })
    await advanceSettled(clock, 60)
    expect(answers.every((a) => (a.value as { v: string } | undefined)?.v === 'after the takeover')).toBe(true)
    expect([sum(tables, 'loads'), sum(tables, 'lease_lost'), sum(tables, 'lease_waited'), sum(tables, 'lease_acquired')]).toEqual([1, 1, 2, 0])
    for (const t of tables) leaseLaws(t.stats())
    await close()
  })

  it('a waiter loads itself past `wait`, and no fetch waits longer than wait + one L2 timeout + loadTimeout', async () => {
    const { clock, store, tables, close } = processes(1, { lease: { ttl: 10_000, wait: 200 } })
    await store.leases!.acquire(NAME, 'hot', 'a slow holder elsewhere', 10_000)
    const origin = latchedLoader<{ v: string }>()
    const answer = outcome(tables[0]!.fetch('hot', origin.loader))
    await settle()
    await advanceSettled(clock, 199)
    expect(origin.calls).toHaveLength(0)
    await advanceSettled(clock, 2)
    expect(origin.calls).toHaveLength(1)
    origin.only().resolve({ v: 'own load' })
    await settle()
    expect(answer.value).toEqual({ v: 'own load' })
    expect(tables[0]!.stats()).toMatchObject({ lease_lost: 1, loads: 1, lease_acquired: 0 })
    await close()
  })

  it('a holder that took the lease at once is bounded as every lease flight is: loadTimeout plus the wait and five L2 timeouts, and close() settles then', async () => {
    const clock = manualClock(0)
    const l2 = memoryL2({ clock })
    const table = createTable<string>({ clock, l2, lease: true, loadTimeout: 1_000, sweepInterval: 1e9 })
    const bound = 1_000 + 2_000 + 5 * DEFAULT_L2_TIMEOUT // the lease's wait defaults to twice its ttl, min(loadTimeout, 3 s); memoryL2 sets no timeout of its own
    const origin = latchedLoader<string>()
    const reader = outcome(table.fetch('k', origin.loader))
    await advanceSettled(clock, 0)
    expect(origin.calls).toHaveLength(1) // it took the lease at once and loads
    const closed = outcome(table.close())
    await advanceSettled(clock, bound - 1)
    expect([origin.only().context.signal.aborted, reader.state, closed.state]).toEqual([false, 'pending', 'pending'])
    await advanceSettled(clock, 1)
    expect([origin.only().context.signal.aborted, reader.state, closed.state]).toEqual([true, 'rejected', 'fulfilled'])
    expect(reader.error).toBeInstanceOf(LoadTimeoutError)
    expect(reader.error).toMatchObject({ loadTimeout: 1_000, bound })
  })

  it('an invalidate during the lease voids it: the waiters load afresh, and no process answers the value loaded before it', async () => {
    const { tables, store, close } = processes(3)
    const [holderTable, waiterTable, writer] = tables as [Table<{ v: string } | undefined>, Table<{ v: string } | undefined>, Table<{ v: string } | undefined>]
    const old = latchedLoader<{ v: string }>()
    const holder = outcome(holderTable.fetch('hot', old.loader))
    await settle()
    await settle()
    const fresh = latchedLoader<{ v: string }>()
    const waiter = outcome(waiterTable.fetch('hot', fresh.loader))
    await settle()
    expect(old.calls).toHaveLength(1)
    await writer.invalidate('hot') // the row changed at the origin while the holder loaded
    for (let i = 0; i < 4; i++) await settle()
    expect(fresh.calls).toHaveLength(1) // woken by the invalidate, the waiter loads afresh
    fresh.only().resolve({ v: 'after the change' })
    old.only().resolve({ v: 'before the change' })
    for (let i = 0; i < 4; i++) await settle()
    expect(holder.value).toEqual({ v: 'before the change' }) // its own caller asked before the change
    expect(waiter.value).toEqual({ v: 'after the change' })
    expect((await store.get(NAME, 'hot'))?.kind).not.toBe('value') // the holder's write-back was refused by version
    const later = latchedLoader<{ v: string }>()
    const reads = tables.map((t) => outcome(t.fetch('hot', later.loader)))
    for (let i = 0; i < 4; i++) await settle()
    for (const call of later.calls) call.resolve({ v: 'loaded afterwards' })
    for (let i = 0; i < 4; i++) await settle()
    for (const read of reads) expect(read.value).not.toEqual({ v: 'before the change' })
    expect(waiterTable.stats().lease_lost).toBe(1)
    await close()
  })

  it('with L2 failing, a herd in one process is still one load, and no fetch fails', async () => {
    const clock = manualClock(0)
    const l2 = chaosL2(memoryL2({ clock }), clock)
    l2.fail('all', { kind: 'throw' })
    const { tables, close } = processes(1, { l2 })
    const origin = latchedLoader<{ v: string }>()
    const answers = Array.from({ length: 100 }, () => outcome(tables[0]!.fetch('hot', origin.loader)))
    for (let i = 0; i < 4; i++) await settle()
    origin.only().resolve({ v: 'local' })
    for (let i = 0; i < 4; i++) await settle()
    expect(answers.every((a) => a.state === 'fulfilled')).toBe(true)
    expect(tables[0]!.stats()).toMatchObject({ loads: 1, lease_acquired: 0, lease_waited: 0, lease_lost: 0 })
    l2.heal()
    await close()
  })

  it('a lease call that fails after L2 answered the read means a local load, counted as no lease role, and the table goes on', async () => {
    const clock = manualClock(0)
    const l2 = chaosL2(memoryL2({ clock }), clock)
    l2.fail('lease', { kind: 'throw' })
    const { tables, close } = processes(2, { l2 })
    const origin = latchedLoader<{ v: string }>()
    const answers = tables.map((t) => outcome(t.fetch('hot', origin.loader)))
    for (let i = 0; i < 4; i++) await settle()
    expect(origin.calls).toHaveLength(2) // no lease: one load per process, as without the option
    for (const call of origin.calls) call.resolve({ v: 'each its own' })
    for (let i = 0; i < 4; i++) await settle()
    expect(answers.every((a) => a.state === 'fulfilled')).toBe(true)
    expect(sum(tables, 'l2_errors')).toBe(2)
    // Neither waited on another holder: a local load counts no lease role.
    expect([sum(tables, 'loads'), sum(tables, 'lease_acquired'), sum(tables, 'lease_lost')]).toEqual([2, 0, 0])
    l2.heal()
    await close()
  })
})
