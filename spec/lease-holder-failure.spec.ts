/**
 * A lease holder whose loader fails: the flights waiting on its lease fail with it, as the waiters
 * of a flight in one process do, so a herd across processes costs the origin one call however it
 * ends. With grace, a waiter's callers get the graced value (the fail-safe: its row's, or the one it
 * found in L2), and a process that was not waiting holds its graced row off for `graceBackoff`;
 * a change heard in between beats the failure. Tables on one memoryL2 and one localBus are the
 * processes; latched loaders and one manual clock decide every interleaving.
 */
import { describe, expect, it } from 'vitest'
import { type Stats, type Table, type TableEvents, createTable, LeaseHolderFailedError, localBus, memoryL2 } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { advanceSettled, latchedLoader, outcome, settle } from './support/latch.js'

type Row = { v: string }
const NAME = 'stock'
const TTL = 1_000
const BACKOFF = 500

/** `n` tables named alike on one clock, one L2 and one bus, with grace and leases: each a "process". */
function processes(n: number) {
  const clock = manualClock(0)
  const store = memoryL2({ clock })
  const bus = localBus()
  const tables = Array.from({ length: n }, () =>
    createTable<Row>({ name: NAME, ttl: TTL, jitter: 0, grace: 10 * TTL, graceBackoff: BACKOFF, sweepInterval: 1e9, loadTimeout: 5_000, clock, l2: store, bus, lease: true }),
  )
  const close = async () => {
    await Promise.all(tables.map((t) => t.close()))
    await store.close()
    await bus.close()
  }
  return { clock, store, tables, close }
}

/** Lets the owners, the L2 calls and the bus run to quiet. */
async function quiet(): Promise<void> {
  for (let i = 0; i < 8; i++) await settle()
}

/** Fills `id` with `value` in every table (the first loads, the others answer from L2), then lets the rows expire into their grace. */
async function filledThenExpired(tables: Table<Row>[], clock: ReturnType<typeof manualClock>, id: string, value: Row): Promise<void> {
  for (const table of tables) await table.fetch(id, () => Promise.resolve(value))
  await advanceSettled(clock, TTL + 1)
}

const sum = (tables: Table<Row>[], counter: keyof Stats) => tables.reduce((n, t) => n + t.stats()[counter], 0)

describe('a lease holder whose loader fails', () => {
  it('its waiter takes the failure as its own: one origin call, both processes answer the graced value', async () => {
    const { clock, tables, close } = processes(2)
    const [a, b] = tables as [Table<Row>, Table<Row>]
    await filledThenExpired(tables, clock, 'hot', { v: 'before the outage' })
    const down = latchedLoader<Row>()
    const errors: TableEvents['error'][] = []
    b.events.on('error', (e) => errors.push(e))
    const fromA = outcome(a.fetch('hot', down.loader))
    await quiet()
    const fromB = outcome(b.fetch('hot', down.loader))
    await quiet()
    expect(down.calls).toHaveLength(1) // A holds the lease; B waits on it
    down.only().reject(new Error('origin down'))
    await quiet()
    expect(fromA).toMatchObject({ state: 'fulfilled', value: { v: 'before the outage' } })
    expect(fromB).toMatchObject({ state: 'fulfilled', value: { v: 'before the outage' } })
    expect(down.calls).toHaveLength(1)
    expect(b.stats()).toMatchObject({ loads: 0, load_errors: 1, failsafe: 1, lease_lost: 0, lease_waited: 0, stale_hits: 1 })
    expect(errors).toHaveLength(1)
    expect(errors[0]!.error).toBeInstanceOf(LeaseHolderFailedError)
    expect((errors[0]!.error as LeaseHolderFailedError).code).toBe('ECHOSTORE_LEASE_HOLDER_FAILED')
    // B backs off as A does: a fetch within graceBackoff gets the graced value without a flight.
    expect(await b.fetch('hot', down.loader)).toEqual({ v: 'before the outage' })
    expect(down.calls).toHaveLength(1)
    expect(sum(tables, 'inflight')).toBe(0)
    await close()
  })

  it('a process that was not waiting holds its graced row off for graceBackoff, then asks the origin again', async () => {
    const { clock, tables, close } = processes(2)
    const [a, c] = tables as [Table<Row>, Table<Row>]
    await filledThenExpired(tables, clock, 'hot', { v: 'old' })
    const down = latchedLoader<Row>()
    const fromA = outcome(a.fetch('hot', down.loader))
    await quiet()
    down.only().reject(new Error('origin down'))
    await quiet()
    expect(fromA.value).toEqual({ v: 'old' })
    // C heard the failure: its misses within graceBackoff answer the graced value, with no flight.
    const before = c.stats()
    expect(await c.fetch('hot', down.loader)).toEqual({ v: 'old' })
    expect(c.stats().flights - before.flights).toBe(0)
    expect(c.stats().stale_hits - before.stale_hits).toBe(1)
    expect(down.calls).toHaveLength(1)
    await advanceSettled(clock, BACKOFF)
    const again = outcome(c.fetch('hot', down.loader))
    await quiet()
    expect(down.calls).toHaveLength(2) // the back-off is over: C asks the origin
    down.calls[1]!.resolve({ v: 'back' })
    await quiet()
    expect(again.value).toEqual({ v: 'back' })
    await close()
  })

  it('a waiter that found a graced entry in L2 (no row of its own) takes the failure as its own too', async () => {
    const { clock, tables, close } = processes(3)
    const [a, b, late] = tables as [Table<Row>, Table<Row>, Table<Row>]
    for (const table of [a, b]) await table.fetch('hot', () => Promise.resolve({ v: 'in L2' }))
    await advanceSettled(clock, TTL + 1)
    const down = latchedLoader<Row>()
    const fromA = outcome(a.fetch('hot', down.loader))
    await quiet()
    const fromLate = outcome(late.fetch('hot', down.loader)) // never held the row: L2's graced entry is its fallback
    await quiet()
    down.only().reject(new Error('origin down'))
    await quiet()
    expect(fromA.value).toEqual({ v: 'in L2' })
    expect(fromLate).toMatchObject({ state: 'fulfilled', value: { v: 'in L2' } })
    expect(down.calls).toHaveLength(1)
    expect(late.stats()).toMatchObject({ loads: 0, failsafe: 1 })
    await close()
  })

  it('a waiter with no graced value anywhere fails with the holder (LeaseHolderFailedError); its next fetch loads afresh', async () => {
    const { tables, close } = processes(2)
    const [a, b] = tables as [Table<Row>, Table<Row>]
    const flaky = latchedLoader<Row>()
    const fromA = outcome(a.fetch('cold', flaky.loader))
    await quiet()
    const fromB = outcome(b.fetch('cold', flaky.loader))
    await quiet()
    flaky.only().reject(new Error('a passing fault'))
    await quiet()
    expect(fromA.state).toBe('rejected')
    expect(fromB.state).toBe('rejected')
    expect(fromB.error).toBeInstanceOf(LeaseHolderFailedError)
    expect(flaky.calls).toHaveLength(1)
    expect(b.stats()).toMatchObject({ loads: 0, lease_lost: 0, load_errors: 1, failsafe: 0 })
    const again = outcome(b.fetch('cold', flaky.loader))
    await quiet()
    flaky.calls[1]!.resolve({ v: 'second try' })
    await quiet()
    expect(again.value).toEqual({ v: 'second try' })
    await close()
  })

  it('a change heard after the failure beats it: a waiter fenced by an invalidate loads instead of answering the graced value', async () => {
    const { clock, tables, close } = processes(3)
    const [a, b, writer] = tables as [Table<Row>, Table<Row>, Table<Row>]
    await filledThenExpired(tables, clock, 'hot', { v: 'old' })
    const origin = latchedLoader<Row>()
    const fromA = outcome(a.fetch('hot', origin.loader))
    await quiet()
    const fromB = outcome(b.fetch('hot', origin.loader))
    await quiet()
    await writer.invalidate('hot') // the row changed: nobody may answer 'old' any more
    await quiet()
    origin.calls[0]!.reject(new Error('origin down'))
    await quiet()
    for (const call of origin.calls.slice(1)) call.resolve({ v: 'new' })
    await quiet()
    for (const call of origin.calls.slice(1)) call.resolve({ v: 'new' })
    await quiet()
    expect(fromB.state === 'fulfilled' ? fromB.value : undefined).not.toEqual({ v: 'old' })
    expect(fromA.state === 'fulfilled' ? fromA.value : undefined).not.toEqual({ v: 'old' })
    await close()
  })

  it('concerns only the waiters of its own lease: a holder whose lease ran out and was taken over fails alone, and the waiter of the new holder gets its fill', async () => {
    const { clock, tables, close } = processes(3)
    const [a, b, c] = tables as [Table<Row>, Table<Row>, Table<Row>]
    const slow = latchedLoader<Row>()
    const fromA = outcome(a.fetch('cold', slow.loader))
    await quiet()
    expect(slow.calls).toHaveLength(1) // A holds the lease and loads
    await advanceSettled(clock, 3_001) // A's lease (ttl 3 s) runs out; its load goes on
    const fromB = outcome(b.fetch('cold', slow.loader))
    await quiet()
    expect(slow.calls).toHaveLength(2) // B took the lease over and loads
    const fromC = outcome(c.fetch('cold', slow.loader))
    await quiet()
    expect(slow.calls).toHaveLength(2) // C waits on B's lease
    slow.calls[0]!.reject(new Error('A timed out at the origin')) // A says so on the bus
    await quiet()
    expect(fromA.state).toBe('rejected')
    expect(fromC.state).toBe('pending')
    slow.calls[1]!.resolve({ v: 'from B' })
    await quiet()
    expect(fromB.value).toEqual({ v: 'from B' })
    expect(fromC).toMatchObject({ state: 'fulfilled', value: { v: 'from B' } })
    expect(c.stats()).toMatchObject({ loads: 0, load_errors: 0, lease_waited: 1 })
    expect(slow.calls).toHaveLength(2)
    await close()
  })

  it('with grace too: the waiter of the new holder answers its fill, not the graced value', async () => {
    const { clock, tables, close } = processes(3)
    const [a, b, c] = tables as [Table<Row>, Table<Row>, Table<Row>]
    await filledThenExpired(tables, clock, 'hot', { v: 'graced' })
    const slow = latchedLoader<Row>()
    const fromA = outcome(a.fetch('hot', slow.loader))
    await quiet()
    await advanceSettled(clock, 3_001) // A's lease runs out; its load goes on
    const fromB = outcome(b.fetch('hot', slow.loader))
    await quiet()
    const fromC = outcome(c.fetch('hot', slow.loader))
    await quiet()
    expect(slow.calls).toHaveLength(2) // A and B load; C waits on B's lease
    slow.calls[0]!.reject(new Error('A timed out at the origin'))
    await quiet()
    expect(fromA.value).toEqual({ v: 'graced' }) // A's own fail-safe
    expect(fromC.state).toBe('pending')
    slow.calls[1]!.resolve({ v: 'from B' })
    await quiet()
    expect(fromB.value).toEqual({ v: 'from B' })
    expect(fromC.value).toEqual({ v: 'from B' })
    expect(c.stats()).toMatchObject({ failsafe: 0, lease_waited: 1 })
    await close()
  })

  it('a waiter that finds no holder after a failure looks at L2 first: the new holder may have filled and let go', async () => {
    const { clock, store, tables, close } = processes(3)
    const [a, b, c] = tables as [Table<Row>, Table<Row>, Table<Row>]
    const slow = latchedLoader<Row>()
    const fromA = outcome(a.fetch('cold', slow.loader))
    await quiet()
    await advanceSettled(clock, 3_001) // A's lease runs out; its load goes on
    const fromB = outcome(b.fetch('cold', slow.loader))
    await quiet()
    const fromC = outcome(c.fetch('cold', slow.loader))
    await quiet()
    expect(slow.calls).toHaveLength(2)
    // C's read of who holds the lease waits until B has filled and let go.
    const leases = store.leases!
    const holder = leases.holder!.bind(leases)
    let answerHolder = () => {}
    leases.holder = (...args: [string, string | number]) => new Promise((resolve) => (answerHolder = () => resolve(holder(...args))))
    slow.calls[0]!.reject(new Error('A timed out at the origin'))
    await quiet()
    slow.calls[1]!.resolve({ v: 'from B' })
    await quiet()
    expect(fromB.value).toEqual({ v: 'from B' })
    expect(fromC.state).toBe('pending')
    answerHolder()
    await quiet()
    expect(fromA.state).toBe('rejected')
    expect(fromC).toMatchObject({ state: 'fulfilled', value: { v: 'from B' } })
    await close()
  })
})
