/**
 * One scheduled model run: builds the tables of a {@link ModelScenario} on a manual clock (two or
 * three tables are as many processes sharing a memory L2 and a bus, each call of both scheduled), issues its
 * operations, drains, closes, and judges what happened against the {@link Reference}:
 *
 * - every answer is a value of the id asked for, no older than any change the table knew of when
 *   the fetch started (its own put, invalidate or clear resolved, or another table's delivered);
 * - a forced refresh is answered by a loader call that had not answered when it started;
 * - every rejection is one the caller may get (its own timeout or abort reason, the loader's error,
 *   `LoadTimeoutError`, `LeaseHolderFailedError`), and no table reports a fault in its own handlers;
 * - at the quiescent point, the counter laws hold against what the run saw;
 * - after `close()`: every promise settled (loaders included), and no timer is left on the clock.
 *
 * Returns the problems found (none: the run passed).
 */
import type fc from 'fast-check'
import { FetchTimeoutError, LeaseHolderFailedError, LoadTimeoutError, type LoaderContext, type Stats, type Table, createTable, memoryL2 } from '../../src/index.js'
import type { CoherenceMessage } from '../../src/store.js'
import { DEFAULT_L2_TIMEOUT } from '../../src/limits.js'
import { manualClock } from '../../src/testing.js'
import { Reference, type ModelValue } from './reference.js'
import { type ModelConfig, type ModelOp, type ModelScenario, IDS, type ModelId } from './scenario.js'
import { scheduledBus } from './scheduled-bus.js'
import { LateWrites, scheduledL2 } from './scheduled-l2.js'

/** The loader's error in a run. */
class OriginError extends Error {}

/** What the run saw of one table: the figures its counters are held against. */
interface Seen {
  lookups: number
  loaderCalls: number
  timedOut: number
  cancelled: number
  completed: number
  completedFromL2: number
}

/** The table options every run uses. */
const SHAPE = { name: 'model', ttl: 40, jitter: 0, loadTimeout: 100, sweepInterval: 25, capacity: 64 } as const
/** Simulated ms the drains may take before what is still pending counts as lost. */
const DRAIN_MS = 5_000

/** Lets every queued promise reaction run (one macrotask). */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve))

function optionsOf(config: ModelConfig) {
  return {
    ...SHAPE,
    grace: config.grace,
    staleWhileRevalidate: config.staleWhileRevalidate,
    ...(config.softTimeout ? { softTimeout: 15 } : {}),
    ...(config.lease ? { lease: { ttl: 60, wait: 60 } } : {}),
  }
}

/** Runs `scenario` under `scheduler`; resolves to the problems found. */
export async function runScenario(scenario: ModelScenario, scheduler: fc.Scheduler): Promise<string[]> {
  const { config, ops } = scenario
  const problems: string[] = []
  const ref = new Reference()
  const clock = manualClock(1_000)
  const store = memoryL2({ clock })
  const late = new LateWrites(clock, DEFAULT_L2_TIMEOUT)
  /** Per table, the clears it published, in order: a delivered clear raises the receiver's floors like the sender's. */
  const clearsPublished: { revs: Map<ModelId, number>; covers: (value: ModelValue) => boolean; heard: Map<number, number> }[][] = []
  const clearsDelivered: number[][] = []
  const bus = config.tables > 1 ? scheduledBus(scheduler, (index, message) => delivered(index, message)) : undefined
  const tables: Table<ModelValue, ModelId>[] = []
  const seen: Seen[] = []
  const changeResults = new Map<string, () => boolean>()
  for (let t = 0; t < config.tables; t++) {
    const table = createTable<ModelValue, ModelId>({ ...optionsOf(config), clock, l2: scheduledL2(store, scheduler, `L2 ${t}`, late), ...(bus ? { bus } : {}) })
    const s: Seen = { lookups: 0, loaderCalls: 0, timedOut: 0, cancelled: 0, completed: 0, completedFromL2: 0 }
    table.events.on('fill', (event) => {
      s.completed++
      if (event.source === 'l2') s.completedFromL2++
    })
    table.events.on('error', (event) => {
      if (event.id === undefined) problems.push(`table ${t}: a fault in its own handlers: ${String(event.error)}`)
    })
    tables.push(table)
    seen.push(s)
    clearsPublished.push([])
    clearsDelivered.push([0])
  }
  const origins = tables.map((table) => table.origin)

  /** Another table's message reached table `index`: it now knows that change. */
  function delivered(index: number, message: CoherenceMessage): void {
    const from = origins.indexOf(message.origin)
    if (from < 0 || from === index) return
    if (message.kind === 'clear') {
      const nth = clearsDelivered[index]![from] ?? 0
      clearsDelivered[index]![from] = nth + 1
      const clear = clearsPublished[from]![nth]
      if (clear !== undefined) {
        clear.heard.set(index, ref.step)
        for (const [id, rev] of clear.revs) ref.raise(index, id, rev, clear.covers)
      }
    } else if (message.kind !== 'fill' && message.kind !== 'tag') {
      ref.raise(index, message.id as ModelId, message.version, changeResults.get(`${from}:${message.id}:${message.version}`) ?? (() => false))
    }
  }

  const pending = new Set<Promise<unknown>>()
  const loaders = new Set<Promise<unknown>>()
  const track = <T>(set: Set<Promise<unknown>>, promise: Promise<T>): Promise<T> => {
    const tracked = promise.finally(() => set.delete(tracked))
    set.add(tracked)
    tracked.catch(() => {})
    return tracked
  }
  const controllers: { controller: AbortController; reason: Error }[] = []
  /** Changes wait for a clear in progress, and a clear for every change in progress (see the Reference). */
  let changes: Promise<unknown>[] = []
  let clearing: Promise<unknown> = Promise.resolve()

  const loaderFor = (t: number, mode: ModelOp & { type: 'fetch' }) => (id: ModelId, context: LoaderContext) => {
    seen[t]!.loaderCalls++
    const { value, call } = ref.load(id, t)
    if (mode.reportVersion) context.setVersion(value.rev)
    if (mode.loader === 'hang') {
      const signal = context.signal
      return track(loaders, new Promise<ModelValue>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true })))
    }
    return track(
      loaders,
      scheduler.schedule(Promise.resolve(), `loader ${t} ${id}`).then(() => {
        call.answered = ++ref.step
        if (mode.loader === 'fail') throw new OriginError(`origin failed for ${id}`)
        return value
      }),
    )
  }

  function fetch(op: ModelOp & { type: 'fetch' }): void {
    const { table: t, id, mode } = op
    const table = tables[t]!
    const step = ++ref.step
    const forced = mode === 'force' || mode === 'force+signal'
    const before = table.peek(id)
    let reason: Error | undefined
    let options: Parameters<Table<ModelValue, ModelId>['fetch']>[2]
    if (mode === 'timeout') options = { timeout: 20 }
    else if (mode === 'soft') options = { softTimeout: 10 }
    else if (mode === 'force') options = { forceRefresh: true }
    else if (mode === 'signal' || mode === 'force+signal' || mode === 'aborted') {
      const controller = new AbortController()
      reason = new Error(`abort of fetch ${step}`)
      if (mode === 'aborted') controller.abort(reason)
      else controllers.push({ controller, reason })
      options = { signal: controller.signal, ...(forced ? { forceRefresh: true } : {}) }
    }
    if (mode !== 'aborted') seen[t]!.lookups++
    const answered = track(pending, table.fetch(id, loaderFor(t, op), options))
    answered.then(
      (value) => judge(t, id, step, forced, before, value),
      (error: unknown) => {
        if (error instanceof FetchTimeoutError) seen[t]!.timedOut++
        else if (reason !== undefined && error === reason) seen[t]!.cancelled++
        // A loader's failure reaches every waiter of its flight, and with a lease the waiters in other processes too.
        else if (!(error instanceof OriginError || error instanceof LoadTimeoutError || error instanceof LeaseHolderFailedError))
          problems.push(`table ${t} fetch ${id} (${mode}) rejected with ${String(error)}`)
      },
    )
  }

  function judge(t: number, id: ModelId, step: number, forced: boolean, before: ModelValue | undefined, value: ModelValue | undefined): void {
    if (value === undefined || value.id !== id) return void problems.push(`table ${t} fetch ${id}: answered ${JSON.stringify(value)}`)
    // The floor is read at the end of the run: a clear's floor holds only if L2 moved, which is known once it resolves.
    verdicts.push(() => {
      // A write that reached L2 late (after a clear asked for after it, or past the table's timeout)
      // lands where nothing newer may be live to refuse it, as the store contract and the README's
      // write-back rule allow: it is not held against any floor.
      if (late.values.has(value)) return
      const floor = ref.floor(t, id, step, value)
      if (value.rev < floor) problems.push(`table ${t} fetch ${id} (step ${step}): answered revision ${value.rev}, older than revision ${floor} it knew of`)
    })
    if (forced) {
      const call = value.call >= 0 ? ref.calls[value.call] : undefined
      if (call === undefined || value === before || (call.answered !== undefined && call.answered < step)) {
        problems.push(`table ${t} forced fetch ${id} (step ${step}): answered without a loader call of its own (revision ${value.rev}, call ${value.call})`)
      }
    }
  }
  const verdicts: (() => void)[] = []

  function change(op: ModelOp & { type: 'put' | 'invalidate' }): void {
    const { table: t, id } = op
    const table = tables[t]!
    const started = clearing.then(async () => {
      const rev = ref.bump(id)
      const result = op.type === 'put' ? await table.put(id, { id, rev, call: -1 }, { version: rev }) : await table.invalidate(id, { version: rev })
      // A change whose L2 write failed says so: L2 may serve what it replaced once this table's row
      // or tombstone is gone ("retry the change"), so it raises no floor.
      const wrote = () => result.l2 !== 'failed'
      changeResults.set(`${t}:${id}:${rev}`, wrote)
      ref.raise(t, id, rev, wrote)
    })
    changes.push(track(pending, started))
  }

  function clear(op: ModelOp & { type: 'clear' }): void {
    const { table: t } = op
    const before = Promise.allSettled([clearing, ...changes])
    changes = []
    clearing = track(
      pending,
      before.then(async () => {
        const revs = ref.bumpAll()
        let outcome: string | undefined
        /** Which table heard of the clear when (the one that cleared, from its start). */
        const heard = new Map<number, number>([[t, ref.step]])
        // A clear holds when L2 moved; a process that had not heard of it yet may still write a load
        // it started before into the new generation (the store's contract lets a write that raced a
        // clear land after it), so such a load is not held against it.
        const covers = (value: ModelValue) => {
          if (outcome !== 'cleared') return false
          const call = value.call < 0 ? undefined : ref.calls[value.call]
          return call === undefined || call.table === t || call.started > (heard.get(call.table) ?? Number.POSITIVE_INFINITY)
        }
        clearsPublished[t]!.push({ revs, covers, heard })
        const result = await tables[t]!.clear()
        outcome = result.l2
        for (const [id, rev] of revs) ref.raise(t, id, rev, covers)
      }),
    )
  }

  async function advance(ms: number): Promise<void> {
    const target = clock.now() + ms
    for (let due = clock.nextDue(); due !== undefined && due <= target; due = clock.nextDue()) {
      clock.set(due)
      ref.step++
      await settle()
    }
    clock.set(target)
    await settle()
  }

  async function steps(n: number): Promise<void> {
    for (let i = 0; i < n && scheduler.count() > 0; i++) {
      await scheduler.waitNext(1)
      ref.step++
      await settle()
    }
  }

  /** Releases tasks and moves the clock until `done()` or the drain's budget is spent. */
  async function drain(done: () => boolean): Promise<boolean> {
    const until = clock.now() + DRAIN_MS
    while (!done()) {
      if (scheduler.count() > 0) await steps(1)
      else {
        const due = clock.nextDue()
        if (due === undefined || due > until) {
          for (let i = 0; i < 3 && !done(); i++) await settle()
          return done()
        }
        await advance(due - clock.now())
      }
    }
    return true
  }

  for (const op of ops) {
    if (op.type === 'fetch') fetch(op)
    else if (op.type === 'put' || op.type === 'invalidate') change(op)
    else if (op.type === 'clear') clear(op)
    else if (op.type === 'abort') {
      const entry = controllers.length === 0 ? undefined : controllers[op.nth % controllers.length]
      entry?.controller.abort(entry.reason)
    } else if (op.type === 'advance') await advance(op.ms)
    else await steps(op.n)
    await settle()
  }

  const quiet = await drain(() => pending.size === 0 && scheduler.count() === 0 && tables.every((t) => t.stats().inflight === 0))
  if (!quiet) problems.push(`not quiescent after ${DRAIN_MS} ms: ${pending.size} calls pending, inflight ${tables.map((t) => t.stats().inflight).join('/')}`)
  tables.forEach((table, t) => problems.push(...laws(t, table.stats(), seen[t]!, config)))
  for (const verdict of verdicts) verdict()
  const closed = tables.map((table) => track(pending, table.close()))
  const drained = await drain(() => pending.size === 0 && loaders.size === 0 && scheduler.count() === 0)
  if (!drained) problems.push(`after close: ${pending.size} calls and ${loaders.size} loaders never settled`)
  await Promise.race([Promise.all(closed), settle()])
  if (clock.pending() > 0) problems.push(`after close: ${clock.pending()} timers left on the clock`)
  return problems
}

/** The counter laws (README, Counters and their laws) of table `t` at a quiescent point, against what the run saw. */
function laws(t: number, s: Stats, seen: Seen, config: ModelConfig): string[] {
  const broken: string[] = []
  const law = (name: string, holds: boolean, shown: string) => holds || broken.push(`table ${t}: ${name} (${shown})`)
  law('hits + misses = fetches that reached the lookup', s.hits + s.misses === seen.lookups, `${s.hits} + ${s.misses} vs ${seen.lookups}`)
  law('misses = flights + coalesced', s.misses === s.flights + s.coalesced, `${s.misses} vs ${s.flights} + ${s.coalesced}`)
  law('loads = loader calls, loads ≤ flights', s.loads === seen.loaderCalls && s.loads <= s.flights, `${s.loads}, ${seen.loaderCalls}, ${s.flights}`)
  law('l2_hits + loads ≤ flights', s.l2_hits + s.loads <= s.flights, `${s.l2_hits} + ${s.loads} vs ${s.flights}`)
  law('flights = answered + load_errors + abandoned', s.flights === seen.completed + s.load_errors + s.abandoned, `${s.flights} vs ${seen.completed} + ${s.load_errors} + ${s.abandoned}`)
  law('l2_hits = flights answered by L2', s.l2_hits === seen.completedFromL2, `${s.l2_hits} vs ${seen.completedFromL2}`)
  law('timeouts = callers rejected with FetchTimeoutError', s.timeouts === seen.timedOut, `${s.timeouts} vs ${seen.timedOut}`)
  law('cancelled = callers rejected with their abort reason', s.cancelled === seen.cancelled, `${s.cancelled} vs ${seen.cancelled}`)
  law('inflight = 0', s.inflight === 0, `${s.inflight}`)
  law('failsafe ≤ load_errors, stale_hits ≤ misses', s.failsafe <= s.load_errors && s.stale_hits <= s.misses, `${s.failsafe}/${s.load_errors}, ${s.stale_hits}/${s.misses}`)
  law(
    'lease_waited ≤ l2_hits, lease_acquired + lease_lost ≤ loads',
    s.lease_waited <= s.l2_hits && s.lease_acquired + s.lease_lost <= s.loads,
    `${s.lease_waited}/${s.l2_hits}, ${s.lease_acquired} + ${s.lease_lost}/${s.loads}`,
  )
  if (!config.lease) law('no lease counted without lease', s.lease_acquired + s.lease_lost + s.lease_waited === 0, `${s.lease_acquired}, ${s.lease_lost}, ${s.lease_waited}`)
  law('size ≤ capacity', s.size <= SHAPE.capacity, `${s.size}`)
  return broken
}

export { IDS }
