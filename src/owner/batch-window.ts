/**
 * The batch window: a flight started with a batch loader waits here until every promise job of the
 * current tick has run, then goes to its batch loader with every other flight started with it in
 * that time, as one call per `maxBatchSize` ids. This is DataLoader's window: reads made any number
 * of promise hops apart (resolvers that await an auth check or a parent field before reading) share
 * one call; a read made in a later macrotask (a timer, an I/O callback) gets a call of its own.
 *
 * Written only by the owner's effects (`add`, from `runStarted`) and by its own dispatch.
 */
import { runTraced } from '../core/fetch-trace.js'
import type { Flight } from './flight.js'
import type { RunnerDeps } from './load.js'
import { runBatch } from './load-batch.js'
import type { Batch } from './loader.js'

/** The flights waiting for one batch loader. */
interface Group<V> {
  readonly batch: Batch<V>
  readonly flights: Flight<V>[]
}

/** The flights started with batch loaders in this tick, by batch loader, until they are dispatched. */
export class BatchWindow<V> {
  /** Open (defined) from the first flight added until the dispatch. */
  #groups: Map<Batch<V>['load'], Group<V>> | undefined = undefined

  constructor(private readonly deps: RunnerDeps<V>) {}

  /** Adds a flight whose origin is `batch`; the first one of a tick schedules the dispatch. */
  add(flight: Flight<V>, batch: Batch<V>): void {
    let groups = this.#groups
    if (groups === undefined) {
      groups = this.#groups = new Map()
      afterPromiseJobs(this.#dispatch)
    }
    const group = groups.get(batch.load)
    if (group === undefined) groups.set(batch.load, { batch, flights: [flight] })
    else group.flights.push(flight)
  }

  /** Hands each group's flights still running to `runBatch`, split at its `maxBatchSize`. */
  readonly #dispatch = (): void => {
    const groups = this.#groups!
    this.#groups = undefined
    for (const { batch, flights } of groups.values()) {
      // A flight released while the window was open (its waiters all left) is not asked for.
      const running = flights.filter((flight) => flight.running)
      for (let at = 0; at < running.length; at += batch.maxBatchSize) {
        const call = running.slice(at, at + batch.maxBatchSize)
        runTraced(call.find((flight) => flight.trace !== undefined) ?? call[0]!, () => void runBatch(call, batch, this.deps))
      }
    }
  }
}

const resolved = Promise.resolve()

/**
 * Calls `run` once every promise job of the current tick has run, as DataLoader schedules its
 * dispatch: a promise job that queues a `process.nextTick`, which Node runs only once the promise
 * job queue is empty (and before any timer or I/O callback).
 */
function afterPromiseJobs(run: () => void): void {
  void resolved.then(() => process.nextTick(run))
}
