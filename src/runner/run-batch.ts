/**
 * The runner of a batch: the flights one tick started with the same batch loader (see
 * `batch-window.ts`), loaded in one origin call. Per id it does what `runFlight` does for one (see
 * `load.ts`): L2 first, for every id, in one round trip (a forced refresh takes from it the version of
 * the entry it replaces and a graced value for its unforced joiners, never an answer: see `readL2`); the batch loader is asked only for the ids L2 did
 * not answer and whose flights still run; each answer is written back to L2 (the writes go out together) and
 * posted to the owner as that flight's result. What the batch loader answers is checked here: an
 * `Error` in an id's place fails that id alone; a hole in an array is an absent id, as an entry of
 * `undefined` is; an array of the wrong length, an answer that is neither an array nor a `Map`, or a
 * thrown or rejected call fails every id of the call.
 *
 * With `lease`, the ids that missed L2 ask for their leases in one call, and the ones taken are read
 * from L2 once more in one call (see `askLeases` in `lease.ts`); the batch loader call holds the ids
 * whose lease this batch took, with those that load without one (L2 failed them, or a forced
 * refresh). An id whose lease another holds waits for its fill on its own, as a single flight does,
 * and when it ends up loading asks the batch loader for itself alone, so a batch never waits on one id.
 *
 * Like `runFlight`, it reads the flights, never writes them, and never rejects.
 */
import { traceLoad } from '../core/channels.js'
import { badArgument, describe, showId } from '../core/errors.js'
import type { Id } from '../core/id.js'
import type { L2Facade } from '../l2/facade.js'
import type { LeaseSettings } from '../table/options.js'
import { type Flight, type FlightResult, checkLifetime, checkReportedVersion } from '../flight/flight.js'
import { checkTags } from '../tags/scope.js'
import { askLeases, waitForLease } from './lease.js'
import { type FlightRun, type RunnerDeps, endLease, endLeaseOnRelease, fromL2, loadAfterLease, loaderResultOrFailure, newRun, readL2, takeOutcome, writeBack } from './run.js'
import type { BatchLoaderContext } from '../core/loader.js'
import type { Batch, RunBatchAnswer, RunLoader } from '../owner/loader.js'

/** Runs the flights of one batch call (at most `batch.maxBatchSize` of them). */
export async function runBatch<V>(flights: Flight<V>[], batch: Batch<V>, deps: RunnerDeps<V>): Promise<void> {
  const { l2, port } = deps
  const runs = flights.map(newRun)
  let pending = runs
  if (l2 !== undefined) {
    // Forced runs read L2 too, in the same round trip, for the version their answer carries and a graced fallback (see `readL2`).
    const entries = await l2.getMany(runs.map((run) => run.flight.id))
    const answered = new Set<FlightRun<V>>()
    runs.forEach((run, i) => {
      const answer = readL2(run, entries[i], deps)
      if (answer === undefined) return
      answered.add(run)
      port.done(run.flight, answer)
    })
    pending = runs.filter((run) => !answered.has(run))
    if (deps.lease !== undefined) pending = await takeLeases(pending, batch, l2, deps.lease, deps)
  }
  // A flight released before its load was due is not asked for (a lease it took goes back).
  pending = pending.filter((run) => {
    if (!run.flight.running) endLease(run, deps)
    return run.flight.running
  })
  if (pending.length === 0) return
  const ids = pending.map((run) => run.flight.id)
  port.loadingBatch(ids, deps.lease === undefined ? undefined : pending.map((run) => run.role))
  const context = new BatchContext(pending.map((run) => run.flight))
  const born = deps.bornNow()
  for (const run of pending) run.born = Math.max(run.born, born)
  const stopListening = deps.lease === undefined ? undefined : pending.map((run) => (run.lease === undefined ? undefined : endLeaseOnRelease(run, deps)))
  let answers: BatchOutcome<V>[]
  try {
    answers = align(await traceLoad(deps.table, { ids }, () => callBatch(batch, ids, context, deps)), ids)
  } catch (error) {
    answers = ids.map(() => ({ ok: false, error }))
  }
  if (stopListening !== undefined) for (const stop of stopListening) stop?.()
  if (l2 === undefined) {
    // Nothing to write back: every result is posted now, in one turn.
    pending.forEach((run, i) => {
      const answer = answers[i]!
      const result: FlightResult<V> = answer.ok
        ? loaderResultOrFailure(run.flight.id, run.born, run.version, answer.value, context.lifetimes.get(run.flight.id), context.versions.get(run.flight.id), deps, context.tags.get(run.flight.id))
        : { ok: false, error: answer.error, fallback: undefined }
      port.done(run.flight, result)
    })
    return
  }
  await Promise.all(pending.map((run, i) => settle(run, answers[i]!, context, deps)))
}

/**
 * The lease step of a batch (see the module comment): answers the runs of `pending` that load in
 * this batch's call. The others are answered from a fill, or wait on their own.
 */
async function takeLeases<V>(pending: FlightRun<V>[], batch: Batch<V>, l2: L2Facade, lease: LeaseSettings, deps: RunnerDeps<V>): Promise<FlightRun<V>[]> {
  const asking = pending.filter((run) => run.l2Answered && run.flight.running)
  if (asking.length === 0) return pending
  const leaseDeps = { clock: deps.clock, l2, lease }
  const asks = await askLeases(asking, leaseDeps)
  const elsewhere = new Set<FlightRun<V>>()
  asking.forEach((run, i) => {
    const ask = asks[i]!
    if (ask.kind === 'hold' || ask.kind === 'load') return takeOutcome(run, ask, deps.clock.now())
    elsewhere.add(run)
    if (ask.kind === 'filled') deps.port.done(run.flight, fromL2<V>(ask.entry, deps.clock, true))
    else if (ask.kind === 'wait') void loadAfterLease(run, waitForLease(run.flight, leaseDeps, ask.token, run.version), alone(batch, deps), deps, true)
  })
  return pending.filter((run) => !elsewhere.has(run))
}

/** One id's answer from a batch call. */
type BatchOutcome<V> = { ok: true; value: V | undefined } | { ok: false; error: unknown }

/** Writes back and posts one id's result. */
async function settle<V>(run: FlightRun<V>, answer: BatchOutcome<V>, context: BatchContext<V>, deps: RunnerDeps<V>): Promise<void> {
  let result: FlightResult<V>
  try {
    run.failed = !answer.ok && run.flight.running
    result = answer.ok
      ? await writeBack(run, answer.value, context.lifetimes.get(run.flight.id), context.versions.get(run.flight.id), deps, context.tags.get(run.flight.id))
      : { ok: false, error: answer.error, fallback: run.fallback }
  } catch (error) {
    result = { ok: false, error, fallback: run.fallback }
  }
  endLease(run, deps)
  deps.port.done(run.flight, result)
}

/** Calls the batch loader, marking its ids as loading while its synchronous part runs (see `RunnerDeps.loading`). */
function callBatch<V>(batch: Batch<V>, ids: Id[], context: BatchLoaderContext<Id>, deps: RunnerDeps<V>): ReturnType<Batch<V>['load']> {
  const outer = deps.loading.batch
  deps.loading.batch = new Set(ids)
  deps.port.enteringLoader()
  try {
    return batch.load(ids.slice(), context)
  } finally {
    deps.loading.batch = outer
  }
}

/** The batch loader's answer as one outcome per id, in the order of `ids` (see the module comment). */
function align<V>(answer: RunBatchAnswer<V>, ids: Id[]): BatchOutcome<V>[] {
  const of = (value: V | undefined | Error): BatchOutcome<V> => (value instanceof Error ? { ok: false, error: value } : { ok: true, value })
  if (answer instanceof Map) return ids.map((id) => of(answer.get(id)))
  if (!Array.isArray(answer))
    throw badArgument(TypeError, `the batch loader answered ${describe(answer)} for ${ids.length} ids: answer an array (one entry per id, in order) or a Map from id to value`)
  if (answer.length !== ids.length)
    throw badArgument(TypeError, `the batch loader answered an array of ${answer.length} entries for ${ids.length} ids: answer one entry per id, in the order of the ids (or a Map)`)
  // Read by index, not with `map` (which skips them): a hole is an absent id, as an entry of `undefined` is.
  return ids.map((_, i) => of(answer[i]))
}

/** A loader for one id of a batch: the batch loader asked for that id alone. */
function alone<V>(batch: Batch<V>, deps: RunnerDeps<V>): RunLoader<V> {
  return async (id, { signal, setVersion, setTtl, setTags }) => {
    const context: BatchLoaderContext<Id> = {
      signal,
      setVersion: (of, version) => {
        if (of !== id) throw badArgument(TypeError, `setVersion(${showId(of)}, n): ${showId(of)} is not one of this call's ids`)
        setVersion(version)
      },
      setTtl: (of, ms) => {
        if (of !== id) throw badArgument(TypeError, `setTtl(${showId(of)}, ms): ${showId(of)} is not one of this call's ids`)
        setTtl(ms)
      },
      setTags: (of, tags) => {
        if (of !== id) throw badArgument(TypeError, `setTags(${showId(of)}, tags): ${showId(of)} is not one of this call's ids`)
        setTags(tags)
      },
    }
    const [outcome] = align(await callBatch(batch, [id], context, deps), [id])
    if (!outcome!.ok) throw outcome!.error
    return outcome!.value as V
  }
}

/**
 * What a batch loader receives beside its ids: a signal that aborts once every flight of the call
 * was released (each id's waiters all left, or its bound passed), and `setVersion`, `setTtl` and
 * `setTags` per id. Written by the batch loader (`setVersion`, `setTtl`, `setTags`); read by the
 * runner, which gives each id's reports to its flight's result as a loader's are (see `loaderResult`
 * in `load.ts`); its signal is made on first read.
 */
class BatchContext<V> implements BatchLoaderContext<Id> {
  /** The versions the batch loader reported, by id. */
  readonly versions = new Map<Id, number>()
  /** The lifetimes the batch loader chose, by id. */
  readonly lifetimes = new Map<Id, number>()
  /** The tags the batch loader gave, by id. */
  readonly tags = new Map<Id, readonly string[]>()
  #controller: AbortController | undefined = undefined

  constructor(private readonly flights: Flight<V>[]) {}

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      const controller = (this.#controller = new AbortController())
      let running = this.flights.length
      for (const flight of this.flights) {
        const signal = flight.context.signal
        const left = () => {
          if (--running === 0) controller.abort(signal.reason)
        }
        if (signal.aborted) left()
        else signal.addEventListener('abort', left, { once: true })
      }
    }
    return this.#controller.signal
  }

  /** A bound function, made only when the batch loader asks for it. */
  get setVersion(): (id: Id, version: number) => void {
    return (id, version) => {
      if (!this.flights.some((flight) => flight.id === id)) throw badArgument(TypeError, `setVersion(${showId(id)}, n): ${showId(id)} is not one of this call's ids`)
      this.versions.set(id, checkReportedVersion(version, id))
    }
  }

  /** A bound function, made only when the batch loader asks for it. */
  get setTtl(): (id: Id, ms: number) => void {
    return (id, ms) => {
      if (!this.flights.some((flight) => flight.id === id)) throw badArgument(TypeError, `setTtl(${showId(id)}, ms): ${showId(id)} is not one of this call's ids`)
      this.lifetimes.set(id, checkLifetime(ms, id))
    }
  }

  /** A bound function, made only when the batch loader asks for it. */
  get setTags(): (id: Id, tags: readonly string[]) => void {
    return (id, tags) => {
      if (!this.flights.some((flight) => flight.id === id)) throw badArgument(TypeError, `setTags(${showId(id)}, tags): ${showId(id)} is not one of this call's ids`)
      this.tags.set(id, checkTags(tags, 'setTags'))
    }
  }
}
