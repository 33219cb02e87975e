/**
 * Leases when things go wrong: a holder that died is taken over once, however the waiters were
 * spread in time; a holder whose flight ends without a fill tells the waiters, and one of them
 * takes over at once (or, when its loader failed, they fail with it); a slow L2 (within its timeout) never fails a fetch; the lease counters keep
 * their laws when a flight is released mid-lease, and a holder whose write failed announces no fill;
 * close() leaves no timer behind a flight released during a lease wait or a slow L2 read; and an L2
 * tombstone outlives every flight that could write behind it.
 */
import { describe, expect, it } from 'vitest'
import { type Table, type TableOptions, LeaseHolderFailedError, createTable, localBus, memoryL2 } from '../src/index.js'
import type { CoherenceMessage, L2Store } from '../src/store.js'
import { type ManualClock, manualClock } from '../src/testing.js'
import { type LatchedCall, advanceSettled, latchedLoader, outcome, settle } from './support/latch.js'
import { slowL2 } from './support/slow-l2.js'

type Row = { v: string }
const NAME = 'leased'

function world(options: TableOptions = {}) {
  const clock = manualClock(0)
  const store = memoryL2({ clock })
  const bus = localBus()
  const heard: CoherenceMessage[] = []
  bus.subscribe((delivery) => delivery.type === 'message' && heard.push(delivery.message))
  const make = (more: TableOptions & { l2?: L2Store } = {}): Table<Row> =>
    createTable<Row>({ name: NAME, ttl: 60_000, jitter: 0, sweepInterval: 1e9, loadTimeout: 10_000, clock, l2: store, bus, lease: true, ...options, ...more })
  return { clock, store, bus, heard, make }
}

describe('a dead holder', () => {
  it('is taken over by one load when its waiters started 0, 200 and 350 ms apart (lease ttl 500): one value everywhere', async () => {
    const { clock, make } = world({ lease: { ttl: 500 } })
    const holder = make()
    const dead = latchedLoader<Row>()
    void outcome(holder.fetch('a', dead.loader))
    await settle()
    expect(dead.calls).toHaveLength(1) // the holder loads, and never answers: it died
    const waiters = [make(), make(), make()]
    // The takeover's load takes 300 ms: longer than the waiters' spread.
    const calledAt: number[] = []
    const latched = latchedLoader<Row>()
    const origin = {
      calls: latched.calls,
      loader: (id: Parameters<typeof latched.loader>[0], context: Parameters<typeof latched.loader>[1]) => (calledAt.push(clock.now()), latched.loader(id, context)),
    }
    const answers = [outcome(waiters[0]!.fetch('a', origin.loader))]
    await advanceSettled(clock, 200)
    answers.push(outcome(waiters[1]!.fetch('a', origin.loader)))
    await advanceSettled(clock, 150)
    answers.push(outcome(waiters[2]!.fetch('a', origin.loader)))
    for (let t = 0; t < 3_000; t += 50) {
      await advanceSettled(clock, 50)
      for (const [i, call] of origin.calls.entries()) if (clock.now() >= calledAt[i]! + 300) call.resolve({ v: `load ${i}` })
      if (answers.every((a) => a.state !== 'pending')) break
    }
    expect(origin.calls).toHaveLength(1)
    expect(answers.map((a) => a.value)).toEqual([{ v: 'load 0' }, { v: 'load 0' }, { v: 'load 0' }])
  })
})

/** `holder` takes the lease of `a` and loads; `waiter` waits on it; then `end` settles the holder's loader call, and 100 ms pass. */
async function holderEnds(clock: ManualClock, holder: Table<Row>, waiter: Table<Row>, end: (held: LatchedCall<Row>) => void) {
  const held = latchedLoader<Row>()
  const first = outcome(holder.fetch('a', held.loader))
  await settle()
  const origin = latchedLoader<Row>()
  const second = outcome(waiter.fetch('a', origin.loader))
  await advanceSettled(clock, 10)
  end(held.only())
  await advanceSettled(clock, 100)
  return { first, origin, second }
}

describe('a holder whose flight ends without a fill', () => {
  it('when its L2 write and its release fail: the waiter in another process learns it and takes over at once', async () => {
    const { clock, store, make } = world({ lease: { ttl: 5_000 } })
    const leases = store.leases!
    const failing: L2Store = {
      get: store.get,
      nextVersion: store.nextVersion,
      clear: store.clear,
      close: store.close,
      set: async () => Promise.reject(new Error('write lost')),
      leases: { acquire: leases.acquire.bind(leases), void: leases.void.bind(leases), release: async () => Promise.reject(new Error('release lost')) },
    }
    const { first, origin, second } = await holderEnds(clock, make({ l2: failing }), make(), (held) => held.resolve({ v: 'holder' }))
    expect(first.value).toEqual({ v: 'holder' })
    expect(origin.calls).toHaveLength(1) // well before the lease's ttl or wait
    origin.only().resolve({ v: 'taken over' })
    await settle()
    expect(second.value).toEqual({ v: 'taken over' })
  })

  it('when its loader fails: the waiter fails with it, as a waiter of a flight in one process does, and its next fetch loads afresh', async () => {
    const { clock, make } = world({ lease: { ttl: 5_000 } })
    const waiter = make()
    const held = latchedLoader<Row>()
    const first = outcome(make().fetch('a', held.loader))
    await settle()
    const origin = latchedLoader<Row>()
    const second = outcome(waiter.fetch('a', origin.loader))
    await advanceSettled(clock, 10)
    held.only().reject(new Error('origin down'))
    for (let i = 0; i < 6; i++) await settle()
    expect(first.state).toBe('rejected')
    expect(second.state).toBe('rejected')
    expect(second.error).toBeInstanceOf(LeaseHolderFailedError)
    expect(origin.calls).toHaveLength(0) // one load for the herd across processes, and its one outcome
    expect(waiter.stats()).toMatchObject({ loads: 0, load_errors: 1, lease_lost: 0 })
    const again = outcome(waiter.fetch('a', origin.loader))
    await settle()
    await settle()
    origin.only().resolve({ v: 'back' })
    await settle()
    expect(again.value).toEqual({ v: 'back' })
  })
})

describe('how a holder whose loader failed ends its lease', () => {
  /** A store whose lease calls are recorded by name; the rest is the world's memoryL2. */
  function recorded(store: ReturnType<typeof memoryL2>) {
    const leases = store.leases!
    const calls: string[] = []
    const spy =
      <A extends unknown[], T>(name: string, run: (...args: A) => Promise<T>) =>
      (...args: A) => (calls.push(name), run(...args))
    const l2: L2Store = {
      get: store.get,
      set: store.set,
      nextVersion: store.nextVersion,
      clear: store.clear,
      close: store.close,
      leases: {
        acquire: spy('acquire', leases.acquire.bind(leases)),
        release: spy('release', leases.release.bind(leases)),
        void: spy('void', leases.void.bind(leases)),
        readOrAcquire: spy('readOrAcquire', leases.readOrAcquire!.bind(leases)),
      },
    }
    return { calls, l2 }
  }

  /** A holder (lease ttl 2 s) whose loader fails `ms` after it took the lease: its lease calls, and the store. */
  async function failsAfter(ms: number) {
    const { clock, store, make } = world({ lease: { ttl: 2_000 } })
    const { calls, l2 } = recorded(store)
    const origin = latchedLoader<Row>()
    const answer = outcome(make({ l2 }).fetch('a', origin.loader))
    await settle()
    await advanceSettled(clock, ms)
    origin.only().reject(new Error('origin down'))
    await settle()
    await settle()
    expect(answer.state).toBe('rejected')
    return { calls, store }
  }

  it('well within the lease’s ttl: a plain void, no read of its token (nobody else can hold it yet)', async () => {
    const { calls, store } = await failsAfter(900) // under ttl / 2 less an L2 call's bound
    expect(calls).toEqual(['readOrAcquire', 'void'])
    expect(await store.leases!.acquire(NAME, 'a', 'next', 1_000)).toBe(true) // it ended
  })

  it('later in its ttl: given back under its token (another process may hold it, had it run out)', async () => {
    const { calls } = await failsAfter(1_000)
    expect(calls).toEqual(['readOrAcquire', 'release'])
  })
})

describe('lease defaults', () => {
  it('bound a wait by what a web request can live with: a few seconds, not the load timeout', async () => {
    const { clock, make } = world({ loadTimeout: 30_000 })
    const holder = make()
    const dead = latchedLoader<Row>()
    void outcome(holder.fetch('a', dead.loader))
    await settle()
    const waiter = make()
    const origin = latchedLoader<Row>()
    const answer = outcome(waiter.fetch('a', origin.loader))
    for (let t = 0; t < 10_000 && origin.calls.length === 0; t += 100) await advanceSettled(clock, 100)
    expect(origin.calls).toHaveLength(1)
    expect(clock.now()).toBeLessThanOrEqual(5_000)
    origin.only().resolve({ v: 'taken over' })
    await settle()
    expect(answer.value).toEqual({ v: 'taken over' })
  })
})

describe('a slow L2, within its timeout', () => {
  it('never fails a lease waiter’s fetch: its own L2 calls are inside its bound', async () => {
    const clock = manualClock(0)
    const store = memoryL2({ clock })
    const options = { name: NAME, ttl: 60_000, jitter: 0, sweepInterval: 1e9, clock, l2: slowL2(store, clock, 45) } as const
    const holder = createTable<Row>({ ...options, loadTimeout: 100_000, lease: { ttl: 200, wait: 200 } })
    const waiter = createTable<Row>({ ...options, loadTimeout: 100, lease: { ttl: 200, wait: 200 } })
    void outcome(holder.fetch('a', latchedLoader<Row>().loader)) // takes the lease and never answers
    await advanceSettled(clock, 100)
    const answer = outcome(waiter.fetch('a', async () => ({ v: 'loaded' })))
    for (let t = 0; t < 2_000 && answer.state === 'pending'; t += 5) await advanceSettled(clock, 5)
    expect(answer.error).toBeUndefined()
    expect(answer.value).toEqual({ v: 'loaded' })
  })
})

describe('lease counters', () => {
  it('keep lease_acquired ≤ loads when the holder’s flight is released before its loader is called', async () => {
    const clock = manualClock(0)
    const table = createTable<Row>({ name: NAME, jitter: 0, sweepInterval: 1e9, clock, l2: slowL2(memoryL2({ clock }), clock, 10), lease: true })
    for (let at = 5; at <= 45; at += 5) {
      const controller = new AbortController()
      const fetched = outcome(table.fetch(`id ${at}`, async () => ({ v: 'x' }), { signal: controller.signal }))
      await settle()
      await advanceSettled(clock, at)
      controller.abort(new Error('left'))
      await advanceSettled(clock, 200)
      expect(fetched.state).not.toBe('pending')
      const s = table.stats()
      expect(s.lease_acquired + s.lease_lost).toBeLessThanOrEqual(s.loads)
    }
  })

  it('keep lease_waited ≤ l2_hits when a waiter is released as the fill arrives', async () => {
    const clock = manualClock(0)
    const store = memoryL2({ clock })
    const options = { name: NAME, jitter: 0, sweepInterval: 1e9, clock, lease: true } as const
    const holder = createTable<Row>({ ...options, l2: store })
    const waiter = createTable<Row>({ ...options, l2: slowL2(store, clock, 10) })
    let n = 0
    for (let fillAt = 5; fillAt <= 60; fillAt += 3) {
      for (let leaveAt = fillAt + 1; leaveAt <= fillAt + 40; leaveAt += 3) {
        const id = `id ${n++}`
        const held = latchedLoader<Row>()
        void outcome(holder.fetch(id, held.loader))
        await settle()
        const controller = new AbortController()
        const left = outcome(waiter.fetch(id, async () => ({ v: 'x' }), { signal: controller.signal }))
        await settle()
        await advanceSettled(clock, fillAt)
        held.only().resolve({ v: 'filled' })
        await advanceSettled(clock, leaveAt - fillAt)
        controller.abort(new Error('left'))
        await advanceSettled(clock, 200)
        expect(left.state).not.toBe('pending')
        const s = waiter.stats()
        expect(s.lease_waited).toBeLessThanOrEqual(s.l2_hits)
      }
    }
  })

  it('a holder whose L2 write failed announces no fill', async () => {
    const { heard, store, make } = world()
    const leases = store.leases!
    const lost = async () => Promise.reject(new Error('write lost'))
    // Every write fails: set, and the holder's write that gives the lease back in the same step.
    const failing = {
      acquire: leases.acquire.bind(leases),
      release: leases.release.bind(leases),
      void: leases.void.bind(leases),
      readOrAcquire: leases.readOrAcquire!.bind(leases),
      setAndRelease: lost,
    }
    const holder = make({ l2: { get: store.get, nextVersion: store.nextVersion, clear: store.clear, close: store.close, leases: failing, set: lost } })
    expect(await holder.fetch('a', () => ({ v: 'x' }))).toEqual({ v: 'x' })
    await settle()
    expect(heard.filter((m) => m.kind === 'fill')).toEqual([])
  })
})

/**
 * `store` behind a server that freezes as the first lease call reaches it: from then on every call
 * waits, in order, and runs once thawed, as the commands of one connection do (a call the table
 * timed out on still runs then).
 */
function freezingAtLeases(store: L2Store) {
  let frozen = false
  const queued: (() => void)[] = []
  const call =
    <A extends unknown[], R>(run: (...args: A) => Promise<R>, freezes = false) =>
    (...args: A): Promise<R> => {
      if (freezes) frozen = true
      return frozen ? new Promise<R>((resolve, reject) => queued.push(() => void run(...args).then(resolve, reject))) : run(...args)
    }
  const own = store.leases!
  const held: L2Store = {
    get: call((t: string, i: string) => store.get(t, i)),
    getMany: call((t: string, ids: readonly string[]) => store.getMany!(t, ids)),
    set: call((t: string, i: string, e: Parameters<L2Store['set']>[2]) => store.set(t, i, e)),
    nextVersion: call((t: string, i: string, f: number) => store.nextVersion(t, i, f)),
    clear: call((t: string) => store.clear(t)),
    close: async () => {},
    leases: {
      acquire: call((t: string, i: string, token: string, ttl: number) => own.acquire(t, i, token, ttl), true),
      acquireMany: call((t: string, ids: readonly string[], token: string, ttl: number) => own.acquireMany!(t, ids, token, ttl), true),
      readOrAcquire: call((t: string, i: string, token: string, ttl: number, floor: number) => own.readOrAcquire!(t, i, token, ttl, floor), true),
      release: call((t: string, i: string, token: string) => own.release(t, i, token)),
      void: call((t: string, i: string) => own.void(t, i)),
    },
  }
  return {
    held,
    thaw: () => {
      frozen = false
      for (const run of queued.splice(0)) run()
    },
  }
}

describe('a lease call the table gave up on (it timed out while the server was frozen)', () => {
  for (const shape of ['fetch', 'getMany'] as const) {
    it(`${shape}: the lease it took once the server answered is given back behind it, so another process loads at once`, async () => {
      const clock = manualClock(0)
      const store = memoryL2({ clock })
      const server = freezingAtLeases(store)
      const a = createTable<Row>({ name: NAME, jitter: 0, sweepInterval: 1e9, clock, l2: server.held, lease: true, batchLoader: (ids) => ids.map((id) => ({ v: `a-${String(id)}` })) })
      const read = shape === 'fetch' ? a.fetch('x', async () => ({ v: 'a-x' })) : a.getMany(['x'])
      for (let step = 0; step < 20; step++) await advanceSettled(clock, 10) // past the L2 timeout: A loads on its own
      expect(shape === 'fetch' ? await read : ((await read) as Row[])[0]).toEqual({ v: 'a-x' })
      expect(a.stats().l2_timeouts).toBeGreaterThan(0)
      server.thaw() // the lease call A gave up on runs now, then its give-back
      await settle()
      // Nobody holds the lease: another process takes it at once.
      expect(await store.leases!.acquire(NAME, 'x', 'another', 1_000)).toBe(true)
      await a.close()
    })
  }
})

describe('close() after a flight released mid-lease', () => {
  it('leaves no timer on the clock when the flight was released during a lease wait', async () => {
    const { make } = world({ lease: { ttl: 5_000 } })
    const holder = make()
    void outcome(holder.fetch('a', latchedLoader<Row>().loader)) // holds the lease, never answers
    await settle()
    const own = manualClock(0) // the waiter's own clock: what it leaves is on it alone
    const waiter = make({ clock: own })
    const controller = new AbortController()
    const fetched = outcome(waiter.fetch('a', async () => ({ v: 'x' }), { signal: controller.signal }))
    await advanceSettled(own, 10)
    controller.abort(new Error('left'))
    await settle()
    await waiter.close()
    expect(fetched.state).toBe('rejected')
    expect(own.pending()).toBe(0)
  })

  it('leaves no timer when the flight was released while a look asked for the lease, and gives back a lease granted to it then', async () => {
    for (const granted of [false, true]) {
      const clock = manualClock(0)
      const store = memoryL2({ clock })
      await store.leases!.acquire(NAME, 'a', 'a-dead-holder', 60_000)
      // A store with leases but no readOrAcquire (a look reads, then asks), whose lease answers can be held.
      let holding = false
      const held: (() => void)[] = []
      const own = store.leases!
      const leases: NonNullable<L2Store['leases']> = {
        release: (t, i, token) => own.release(t, i, token),
        void: (t, i) => own.void(t, i),
        acquire: (...args: Parameters<NonNullable<L2Store['leases']>['acquire']>) => {
          const answer = own.acquire(...args)
          return holding ? new Promise<boolean>((resolve, reject) => held.push(() => void answer.then(resolve, reject))) : answer
        },
      }
      const plain: L2Store = {
        get: (t, i) => store.get(t, i),
        set: (t, i, e) => store.set(t, i, e),
        nextVersion: (t, i, f) => store.nextVersion(t, i, f),
        clear: (t) => store.clear(t),
        close: async () => {},
        leases,
      }
      const table = createTable<Row>({ name: NAME, jitter: 0, sweepInterval: 1e9, clock, l2: plain, lease: { ttl: 1_000, wait: 5_000 } })
      const controller = new AbortController()
      const fetched = outcome(table.fetch('a', async () => ({ v: 'x' }), { signal: controller.signal }))
      await settle()
      if (granted) await store.leases!.release(NAME, 'a', 'a-dead-holder') // the next look is granted the lease
      holding = true
      await advanceSettled(clock, 2) // the first look: a read, then the lease asked for, its answer held
      expect(held.length, `granted: ${granted}`).toBe(1)
      controller.abort(new Error('left'))
      await settle()
      held.splice(0).forEach((answer) => answer())
      await settle()
      await table.close()
      expect(fetched.state).toBe('rejected')
      expect(clock.pending(), `granted: ${granted}`).toBe(0)
      // Nobody holds the lease the released flight was granted: another process takes it at once.
      if (granted) expect(await store.leases!.acquire(NAME, 'a', 'another', 1_000)).toBe(true)
    }
  })

  it('leaves no timer on the clock when the flight was released during a slow L2 read', async () => {
    const clock = manualClock(0)
    const stalled: L2Store = { get: () => new Promise(() => {}), set: async () => true, nextVersion: async (_t, _i, floor) => floor, clear: async () => {}, close: async () => {} }
    const table = createTable<Row>({ jitter: 0, sweepInterval: 1e9, clock, l2: stalled })
    const controller = new AbortController()
    const fetched = outcome(table.fetch('a', async () => ({ v: 'x' }), { signal: controller.signal }))
    await settle()
    controller.abort(new Error('left'))
    await settle()
    await table.close()
    expect(fetched.state).toBe('rejected')
    expect(clock.pending()).toBe(0)
  })
})
