/**
 * Batch loads with the `lease` option, on a memoryL2 and on a real Redis: a batch asks for the
 * leases of its missed ids in one store call and loads the ids it holds in one batch loader call;
 * an id whose lease another process holds waits for that holder's fill (or takes over when it gives
 * up) on its own; a failed lease call loads without leases, as a single fetch does. Tables sharing
 * one store and one local bus stand for processes; the table clock is manual (Redis keeps its own
 * time for expiry only), and every wait is for an event (a latched call, a settled answer).
 */
import { describe, expect, it } from 'vitest'
import { type Id, type Table, createTable, localBus, memoryL2 } from '../src/index.js'
import type { L2Store } from '../src/store.js'
import { redisL2 } from '../src/redis.js'
import { type ChaosL2, chaosL2, manualClock } from '../src/testing.js'
import { latchedBatchLoader, latchedLoader, outcome, settle } from './support/latch.js'
import { REDIS_URL, describeRedis, suiteRedis, testPrefix } from './support/redis.js'

type Row = { v: string } | undefined
const NAME = 'stock'

/** Lets promises and real I/O settle until `done()` holds (at most ~2,000 turns, then fails naming `what`). */
async function until(done: () => boolean, what: string): Promise<void> {
  for (let turn = 0; turn < 2_000; turn++) {
    if (done()) return
    await (turn < 50 ? settle() : new Promise((resolve) => setTimeout(resolve, 1)))
  }
  throw new Error(`never happened: ${what}`)
}

/** A store for a test: a fresh memoryL2, or a redisL2 under this run's prefix. */
type MakeStore = () => L2Store

const prefix = testPrefix('batch-lease')

describe('a batch with lease, on memoryL2', () => batchLeaseSuite(() => memoryL2()))

describeRedis('a batch with lease, on redisL2', () => {
  suiteRedis(prefix) // deletes this run's keys after the suite
  let stores = 0
  batchLeaseSuite(() => redisL2({ url: REDIS_URL, prefix: `${prefix}${++stores}:`, timeout: 1_000 })) // a key space per test
})

/** The suite, for one kind of store. */
function batchLeaseSuite(makeStore: MakeStore): void {
  /** `n` tables ("processes") on one store, each seeing it through its own chaos wrapper (to count and fail its calls), and one bus. */
  function processes(n: number, strip?: (store: L2Store) => L2Store) {
    const clock = manualClock(0)
    const store = makeStore()
    const bus = localBus()
    const views: ChaosL2[] = []
    const tables: Table<Row, Id>[] = []
    for (let i = 0; i < n; i++) {
      const view = chaosL2(strip === undefined ? store : strip(store), clock)
      views.push(view)
      tables.push(createTable<Row, Id>({ name: NAME, ttl: 60_000, jitter: 0, sweepInterval: 1e9, loadTimeout: 10_000, clock, l2: view, bus, lease: { ttl: 10_000, wait: 5_000 } }))
    }
    const close = async () => {
      for (const view of views) view.heal()
      await Promise.all(tables.map((t) => t.close()))
      await bus.close()
      await store.close()
    }
    return { clock, store, views, tables, close }
  }

  it('asks for the leases of its missed ids in one store call and loads them in one batch loader call; the fills release every lease', async () => {
    const { store, views, tables, close } = processes(2)
    const [a, b] = tables as [Table<Row, Id>, Table<Row, Id>]
    const origin = latchedBatchLoader<Row>()
    const ids = ['p1', 'p2', 'p3', 'p4', 'p5']
    const page = outcome(a.fetchMany(ids, origin.loader))
    await until(() => origin.calls.length === 1, 'the batch loader call')
    expect(origin.only().ids).toEqual(ids)
    expect(views[0]!.calls).toMatchObject({ lease: 1, get: 2 }) // one acquire call; one read, one read again for the leases taken
    origin.only().resolve(ids.map((id) => ({ v: `row ${id}` })))
    await until(() => page.state !== 'pending', 'the page')
    expect(page.value).toEqual(ids.map((id) => ({ v: `row ${id}` })))
    expect(a.stats()).toMatchObject({ loads: 5, batch_loads: 1, batch_ids: 5, lease_acquired: 5, lease_lost: 0, fills: 5 })
    // The other process finds every fill in L2, and no lease is left held.
    const elsewhere = latchedBatchLoader<Row>()
    expect(await b.fetchMany(ids, elsewhere.loader)).toEqual(ids.map((id) => ({ v: `row ${id}` })))
    expect(elsewhere.calls).toHaveLength(0)
    await until(() => views[0]!.calls.lease === 1 + ids.length, 'the releases')
    expect(await store.leases!.acquireMany!(NAME, ids, 'after', 1_000)).toEqual(ids.map(() => true))
    await close()
  })

  /** Process A loads 'x' holding its lease (a latched loader; its caller leaves on `signal`); then process B asks for `ids` in a batch, and its batch loader is called. */
  async function batchBesideHolder(ids: Id[], signal?: AbortSignal) {
    const { tables, store, close } = processes(2)
    const [a, b] = tables as [Table<Row, Id>, Table<Row, Id>]
    const single = latchedLoader<Row>()
    const holder = outcome(a.fetch('x', single.loader, signal === undefined ? undefined : { signal }))
    await until(() => single.calls.length === 1, 'the holder loading x')
    const origin = latchedBatchLoader<Row>()
    const page = outcome(b.fetchMany(ids, origin.loader))
    await until(() => origin.calls.length === 1, 'the batch loader call')
    return { single, holder, origin, page, b, store, close }
  }

  it('an id whose lease another process holds waits for that fill; the ids it holds go to the batch loader without it', async () => {
    const { single, holder, origin, page, b, close } = await batchBesideHolder(['y', 'x', 'z'])
    expect(origin.only().ids).toEqual(['y', 'z'])
    origin.only().resolve([{ v: 'y' }, { v: 'z' }])
    await until(() => b.stats().fills === 2, 'the fills of y and z')
    expect(page.state).toBe('pending') // x waits for its holder
    single.only().resolve({ v: 'x from the holder' })
    await until(() => page.state !== 'pending', 'the page')
    expect(holder.value).toEqual({ v: 'x from the holder' })
    expect(page.value).toEqual([{ v: 'y' }, { v: 'x from the holder' }, { v: 'z' }])
    expect(origin.calls).toHaveLength(1)
    expect(b.stats()).toMatchObject({ loads: 2, batch_loads: 1, batch_ids: 2, lease_acquired: 2, lease_waited: 1, l2_hits: 1 })
    await close()
  })

  it('a waiter whose holder gives up takes its lease over and asks the batch loader for that id alone', async () => {
    const leaving = new AbortController()
    const { single, holder, origin, page, b, store, close } = await batchBesideHolder(['x', 'y'], leaving.signal)
    origin.calls[0]!.resolve([{ v: 'y' }])
    leaving.abort(new Error('the holder’s only caller left')) // its flight is released: it gives up the lease
    single.only().reject(single.only().context.signal.reason) // as a loader that honours its signal does
    await until(() => origin.calls.length === 2, 'the batch loader call for x alone')
    expect(origin.calls.map((call) => call.ids)).toEqual([['y'], ['x']])
    expect(() => origin.calls[1]!.context.setVersion('y', 8)).toThrow(/"y" is not one of this call's ids/)
    origin.calls[1]!.context.setVersion('x', 7) // asked for x alone, the batch loader still reports its version
    origin.calls[1]!.resolve([{ v: 'x taken over' }])
    await until(() => page.state !== 'pending', 'the page')
    expect(holder.state).toBe('rejected')
    expect(page.value).toEqual([{ v: 'x taken over' }, { v: 'y' }])
    expect(await store.get(NAME, 'x')).toMatchObject({ kind: 'value', version: 7 })
    expect(b.stats()).toMatchObject({ loads: 2, batch_loads: 2, batch_ids: 2, lease_acquired: 1, lease_lost: 1 })
    await close()
  })

  it('a lease call that fails loads every id without a lease, in one batch loader call, as a single fetch does', async () => {
    const { views, tables, close } = processes(1)
    const [a] = tables as [Table<Row, Id>]
    views[0]!.fail('lease', { kind: 'throw' }, { times: 1 })
    const origin = latchedBatchLoader<Row>()
    const page = outcome(a.fetchMany(['p', 'q', 'r'], origin.loader))
    await until(() => origin.calls.length === 1, 'the batch loader call')
    expect(origin.only().ids).toEqual(['p', 'q', 'r'])
    origin.only().resolve([{ v: 'p' }, { v: 'q' }, { v: 'r' }])
    await until(() => page.state !== 'pending', 'the page')
    expect(page.value).toEqual([{ v: 'p' }, { v: 'q' }, { v: 'r' }])
    // Counted as a single fetch whose lease call failed: a local load, no lease role (none of them waited on a holder).
    expect(a.stats()).toMatchObject({ l2_errors: 1, loads: 3, batch_loads: 1, lease_acquired: 0, lease_lost: 0, fills: 3 })
    // The failed ask, then its token's lease given back for each id: a call that failed may still have landed.
    expect(views[0]!.calls.lease).toBe(4)
    await close()
  })

  it('a store without acquireMany takes the leases with concurrent acquires: still one batch loader call', async () => {
    const withoutMany = (store: L2Store): L2Store => {
      const leases = store.leases!
      return {
        get: store.get.bind(store),
        set: store.set.bind(store),
        nextVersion: store.nextVersion.bind(store),
        clear: store.clear.bind(store),
        close: async () => {},
        timeout: 1_000,
        leases: { acquire: leases.acquire.bind(leases), release: leases.release.bind(leases), void: leases.void.bind(leases) },
      }
    }
    const { views, tables, close } = processes(1, withoutMany)
    const [a] = tables as [Table<Row, Id>]
    const origin = latchedBatchLoader<Row>()
    const page = outcome(a.fetchMany(['p', 'q', 'r'], origin.loader))
    await until(() => origin.calls.length === 1, 'the batch loader call')
    expect(views[0]!.calls.lease).toBe(3)
    expect(origin.only().ids).toEqual(['p', 'q', 'r'])
    origin.only().resolve([{ v: 'p' }, { v: 'q' }, { v: 'r' }])
    await until(() => page.state !== 'pending', 'the page')
    expect(a.stats()).toMatchObject({ batch_loads: 1, lease_acquired: 3 })
    await close()
  })

  it('a flight released while its lease was being taken is not loaded, and its lease goes back', async () => {
    const { store, views, tables, close } = processes(1)
    const [a] = tables as [Table<Row, Id>]
    views[0]!.fail('lease', { kind: 'stall' }, { times: 1 })
    const origin = latchedBatchLoader<Row>()
    const leaving = new AbortController()
    const page = outcome(a.fetchMany(['gone', 'kept'], origin.loader, { signal: leaving.signal }))
    const kept = outcome(a.fetchMany(['kept'], origin.loader)) // joins 'kept' only
    await until(() => views[0]!.stalled === 1, 'the stalled lease call')
    leaving.abort(new Error('the caller left'))
    await until(() => page.state === 'rejected', 'the caller leaving')
    views[0]!.heal()
    await until(() => origin.calls.length === 1, 'the batch loader call')
    expect(origin.only().ids).toEqual(['kept']) // 'gone' was released: not asked for
    origin.only().resolve([{ v: 'kept' }])
    await until(() => kept.state !== 'pending', 'the kept id')
    expect(kept.value).toEqual([{ v: 'kept' }])
    await until(() => views[0]!.calls.lease === 3, 'both leases given back')
    expect(await store.leases!.acquire(NAME, 'gone', 'after', 1_000)).toBe(true)
    expect(await store.leases!.acquire(NAME, 'kept', 'after', 1_000)).toBe(true)
    await close()
  })
}
