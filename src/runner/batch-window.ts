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
import type { Flight } from '../flight/flight.js'
import type { RunnerDeps } from './run.js'
import { runBatch } from './run-batch.js'
import type { Batch } from '../owner/loader.js'

/** The flights waiting for one batch loader in one namespace (the base table's included). */
interface Group<V> {
  /** The origin of the first flight: every flight of the group has one with the same `loader` and `scope`, which loads alike. */
  readonly batch: Batch<V>
  readonly flights: Flight<V>[]
}

/**
 * The flights started with batch loaders in this tick, by batch loader and namespace, until they
 * are dispatched: a namespace's views each adapt the loader to their ids in an origin of their own,
 * and their reads of one tick still share its call.
 */
export class BatchWindow<V> {
  /** Open (defined) from the first flight added until the dispatch; the groups of a loader, one per namespace. */
  #groups: Map<Batch<V>['loader'], Group<V>[]> | undefined = undefined

  constructor(private readonly deps: RunnerDeps<V>) {}

  /** Adds a flight whose origin is `batch`; the first one of a tick schedules the dispatch. */
  add(flight: Flight<V>, batch: Batch<V>): void {
    let groups = this.#groups
    if (groups === undefined) {
      groups = this.#groups = new Map()
      afterPromiseJobs(this.#dispatch)
    }
    const ofLoader = groups.get(batch.loader)
    if (ofLoader === undefined) return void groups.set(batch.loader, [{ batch, flights: [flight] }])
    const group = ofLoader.find((candidate) => candidate.batch.scope === batch.scope)
    if (group === undefined) ofLoader.push({ batch, flights: [flight] })
    else group.flights.push(flight)
  }

  /**
   * Hands each group's flights still running to `runBatch`, split at its `maxBatchSize`; flights
   * whose ids an earlier list holds (see {@link distinctIds}) once that list's calls have ended.
   */
  readonly #dispatch = (): void => {
    const groups = this.#groups!
    this.#groups = undefined
    for (const ofLoader of groups.values()) {
      for (const { batch, flights } of ofLoader) {
        // A flight released while the window was open (its waiters all left) is not asked for.
        const [first, ...later] = distinctIds(flights.filter((flight) => flight.running))
        if (first === undefined) continue
        let ended = this.#run(first, batch)
        for (const list of later) ended = ended.then(() => this.#run(list, batch))
      }
    }
  }

  /** Runs `flights` (ids distinct) in calls of at most `maxBatchSize`; resolves once every call has ended (`runBatch` never rejects). */
  #run(flights: Flight<V>[], batch: Batch<V>): Promise<unknown> {
    const calls: Promise<void>[] = []
    for (let at = 0; at < flights.length; at += batch.maxBatchSize) {
      const call = flights.slice(at, at + batch.maxBatchSize)
      calls.push(runTraced(call.find((flight) => flight.trace !== undefined) ?? call[0]!, () => runBatch(call, batch, this.deps)))
    }
    return Promise.all(calls)
  }
}

/**
 * `flights` as lists that hold each id once, as a batch loader call must: one list, unless the
 * group holds an id twice. Only a fenced flight (a change of its id came while it waited here, and
 * a read after it started the id's next flight) or a flight the coalescing gate left solo may share
 * its id. The first list holds every id's joinable flight; a fenced or solo flight whose id a list
 * holds goes to a later one, run once the earlier calls have ended: with an L2 it is answered from
 * the fill they wrote (no lease of this process in its way), else it asks the batch loader again.
 * Each flight keeps its own answer: a fenced one's goes to its callers and is not stored.
 */
function distinctIds<V>(flights: Flight<V>[]): Flight<V>[][] {
  const alone = (flight: Flight<V>): boolean => flight.joinable && !flight.fenced
  if (flights.every(alone)) return flights.length === 0 ? [] : [flights]
  const lists: { flights: Flight<V>[]; ids: Set<Flight<V>['id']> }[] = []
  for (const flight of [...flights.filter(alone), ...flights.filter((flight) => !alone(flight))]) {
    let list = lists.find((candidate) => !candidate.ids.has(flight.id))
    if (list === undefined) lists.push((list = { flights: [], ids: new Set() }))
    list.flights.push(flight)
    list.ids.add(flight.id)
  }
  return lists.map((list) => list.flights)
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
