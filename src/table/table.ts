import { randomUUID } from '../core/random-uuid.js'
import { setMaxListeners } from 'node:events'
import type { Emitter } from 'mitt'
import { type ClosedCall, SelfFetchError, TableClosedError, abortReason, badArgument, badId, badNumber, describe, reasonOf, showId } from '../core/errors.js'
import { type TableEvents, createEmitter } from '../core/events.js'
import { type ChangeOptions, type ChangeResult, Changes, type ClearResult, type PutOptions } from './changes.js'
import { fetchWatched } from '../core/channels.js'
import { type Clock, MAX_TIMER_MS } from '../core/clock.js'
import { keepShape } from '../core/kept-shapes.js'
import { type FetchTrace, traceFetch } from '../core/fetch-trace.js'
import { R, type Stats, newReadCounters, snapshot } from '../core/counters.js'
import { expiryPolicy } from '../rows/expiry.js'
import { type Id, callerIdOf, isKey, isMarked } from '../core/id.js'
import type { BatchLoader, Loader } from '../core/loader.js'
import { Batch, type Origin, type RunBatchLoader, type RunLoader } from '../owner/loader.js'
import { msg } from '../owner/messages.js'
import { type Owner, startOwner } from '../owner/owner.js'
import { MAX_TTL, type TableOptions, flightBoundOf, resolveOptions, tombstoneLifeOf } from './options.js'
import { readOptions } from './read-options.js'
import { NOT_LIVE, type RowStore } from '../rows/row-store.js'
import { ROOT_SCOPE, type Scope, badCallerId } from '../tags/scope.js'
import { viewBatch, viewLoader } from './view-origin.js'

/** Per-call options of {@link Table.fetch}. */
export interface FetchOptions {
  /** Cancels this caller only: it rejects with `signal.reason`. */
  signal?: AbortSignal
  /** This caller's own deadline in ms, in (0, 2^31 − 1]: it rejects with `FetchTimeoutError`; the flight goes on. */
  timeout?: number
  /**
   * Ms after which this caller takes the id's graced value, if there is one, while the flight goes on
   * and fills the row (in [1, 2^31 − 1]; replaces the table's `softTimeout` for this caller).
   */
  softTimeout?: number
  /** Ignores a live row and the L2 read: starts (or joins) a flight whose answer replaces the row. Counted as a miss. */
  forceRefresh?: boolean
}

/**
 * A read-through table of values `V` under ids `K` (strings, numbers, or a narrower type of either):
 * the facade over one owner actor. `fetch` answers hits straight from the rows (an index lookup, an
 * expiry check and a counter bump, no message); a miss is handed to the owner, which coalesces it
 * onto the id's single flight.
 */
export class Table<V, K extends Id = string> {
  /** A frozen snapshot of a table's counters, `size`, `inflight` and `hit_rate`. */
  static stats(table: { stats(): Stats }): Stats {
    return table.stats()
  }

  /** The table's name (in errors, events, L2 keys and bus messages). */
  readonly name: string
  /** The table's events (a mitt emitter): `load`, `fill`, `error`, `stale`, `sweep`, `l2_error`, `coherence`, `gap`, `clear`. A listener that throws is reported as a process warning; the table goes on. */
  readonly events: Emitter<TableEvents> = createEmitter<TableEvents>()
  /** Identifies this table instance on the bus; it ignores its own messages. */
  readonly origin: string

  /** The hit path's counters (hits, misses, negative_hits): written only by this facade. */
  readonly #reads = newReadCounters()
  /** The owner's rows, read here by the hit path, `peek`, `has`, `size` and stale-while-revalidate (`live` sets visited bits). */
  readonly #rows: RowStore<V>
  readonly #clock: Clock
  readonly #owner: Owner<V>
  readonly #changes: Changes<V>
  /** The table's own loader or batch loader (`get`, `getMany`), if it has one. */
  readonly #origin: Origin<V> | undefined
  /** Most ids in one batch loader call. */
  readonly #maxBatchSize: number
  /** Stale-while-revalidate: a miss on a graced row answers its value at once. */
  readonly #staleWhileRevalidate: boolean
  /** The key space of this table: the base table's, or a namespace's (a view, see {@link namespace}). */
  readonly #scope: Scope
  /** A view's own origin: the table's `batchLoader` asking with the view's ids (a table `loader` is adapted per read). */
  readonly #viewOrigin: Batch<V> | undefined
  /** Set by a view's own `close()`: the view refuses reads and changes; the table goes on. Written only by {@link close}. */
  #viewClosed = false

  /** Use {@link createTable}. */
  constructor(
    options: TableOptions<V, K> = {},
    /** @internal A namespace view to make instead (see {@link namespace}): `options` go unread, every shared piece is the base table's. */
    view?: ViewOf<V, K>,
  ) {
    if (view instanceof ViewOf) {
      const { base, scope } = view
      this.name = base.name
      this.origin = base.origin
      this.events = base.events
      this.#reads = base.#reads
      this.#clock = base.#clock
      this.#owner = base.#owner
      this.#rows = base.#rows
      this.#changes = base.#changes
      this.#origin = base.#origin
      this.#maxBatchSize = base.#maxBatchSize
      this.#staleWhileRevalidate = base.#staleWhileRevalidate
      this.#scope = scope
      this.#viewOrigin = this.#origin instanceof Batch ? viewBatch(this.#origin, scope) : undefined
      return
    }
    this.#scope = ROOT_SCOPE
    this.#viewOrigin = undefined
    const resolved = resolveOptions(options)
    this.name = resolved.name
    this.origin = `${resolved.name}:${randomUUID()}`
    this.#clock = resolved.clock
    this.#staleWhileRevalidate = resolved.staleWhileRevalidate
    this.#origin = resolved.origin as Origin<V> | undefined
    this.#maxBatchSize = resolved.maxBatchSize
    const expiry = expiryPolicy(resolved.ttl, resolved.negativeTtl, resolved.jitter, resolved.random, MAX_TTL)
    const flightBound = flightBoundOf(resolved)
    const tombstoneLife = tombstoneLifeOf(resolved, flightBound)
    this.#owner = startOwner<V>(resolved, { origin: this.origin, events: this.events, expiry, flightBound, tombstoneLife })
    this.#rows = this.#owner.state.rows
    this.#changes = new Changes<V>({
      name: this.name,
      origin: this.origin,
      owner: this.#owner,
      clock: resolved.clock,
      expiry,
      tombstoneLife,
      grace: resolved.grace,
      leases: resolved.lease !== undefined,
      closed: () => this.#owner.closed,
    })
  }

  /**
   * Reads `id` through the table. A live row answers at once; otherwise the caller joins the id's
   * flight, or starts one that calls `loader` (only the first caller's loader runs). Resolves to the
   * value (`undefined` when the loader found nothing, for a table whose `V` admits it); rejects with
   * the loader's error (the same object for every waiter), `FetchTimeoutError`, `signal.reason`,
   * `LoadTimeoutError`, `SelfFetchError`, or `TableClosedError`; a bad id, loader or option rejects with a `TypeError`/`RangeError`.
   */
  fetch(id: K, loader: Loader<V, K>, options?: FetchOptions): Promise<V> {
    // The table calls a loader only with the id it was fetched with: a Loader<V, K> serves as a loader of any id.
    // A row holds `undefined` only when a loader (or put) answered it, which the types allow only when V admits it.
    const origin = loader as unknown as RunLoader<V>
    if (this.#scope === ROOT_SCOPE && options === undefined && typeof origin === 'function' && !fetchWatched.hasSubscribers) return this.#plain('fetch', id, origin) as Promise<V>
    return this.#dispatch('fetch', id, origin, options) as Promise<V>
  }

  /**
   * Writes `value` as the row for `id` in both layers (L2 first, version-guarded), then broadcasts
   * the change on the bus. `undefined` writes a negative row. A change older than what is already
   * known does not change L1, is not sent to L2 (`l2: 'refused'`), still resolves (`applied: false`) and is still broadcast.
   */
  put(id: K, value: V, options?: PutOptions): Promise<ChangeResult> {
    return this.#change('put', id, (key) => this.#changes.put(key, value, options))
  }

  /**
   * Reads many ids through the table, answered in the order of `ids`: each id as {@link fetch} reads
   * it (a live row; else it joins the id's flight, whatever started it; else a new flight), and the
   * flights this call (and any read in the same tick with the same `batchLoader`) starts go to
   * `batchLoader` as one call per `maxBatchSize` ids, for the ids L2 did not answer. An id repeated
   * in `ids` is asked once. `options` apply to each id of this caller. Rejects with the error of the
   * first id in `ids` that failed; for partial results read each id with {@link get} under
   * `Promise.allSettled` (still one batch call). A bad argument rejects with a `TypeError`/`RangeError`.
   */
  fetchMany(ids: readonly K[], batchLoader: BatchLoader<V, K>, options?: FetchOptions): Promise<Array<V | undefined>> {
    if (typeof batchLoader !== 'function') return Promise.reject(badArgument(TypeError, `fetchMany(ids) needs a batch loader function (ids, context) => values, got ${describe(batchLoader)}`))
    const load = batchLoader as unknown as RunBatchLoader<V>
    const batch = new Batch(load, this.#maxBatchSize)
    return this.#readManyTraced('fetchMany', ids, this.#scope === ROOT_SCOPE ? batch : viewBatch(batch, this.#scope), options)
  }

  /**
   * Reads `id` through the table's own `loader` or `batchLoader` (table options), as {@link fetch}
   * does with a loader; with `batchLoader`, every `get` of one tick (its callback and the promise jobs
   * after it) goes to the origin as one batch call. Rejects with a `TypeError` on a table with neither.
   */
  get(id: K, options?: FetchOptions): Promise<V> {
    const origin = this.#origin
    if (origin === undefined) return Promise.reject(noOrigin('get'))
    // The table's own origin was checked when it was made: a plain read skips the loader check.
    if (this.#scope === ROOT_SCOPE && options === undefined && !fetchWatched.hasSubscribers) return this.#plain('get', id, origin) as Promise<V>
    return this.#dispatch('get', id, origin, options) as Promise<V>
  }

  /** Reads many ids through the table's own `loader` or `batchLoader`, as {@link fetchMany} does with a batch loader. Rejects with a `TypeError` on a table with neither. */
  getMany(ids: readonly K[], options?: FetchOptions): Promise<Array<V | undefined>> {
    const origin = this.#viewOrigin ?? this.#origin
    if (origin === undefined) return Promise.reject(noOrigin('getMany'))
    return this.#readManyTraced('getMany', ids, origin, options)
  }

  /**
   * Drops the row for `id` in both layers and leaves a tombstone carrying the version (in L2 it lives
   * `max(ttl, flight bound, 3 L2 timeouts)`, the bound being `loadTimeout` plus, with a lease, its wait and five L2 timeouts, and reads as a miss), fences a flight in progress for the id (its waiters
   * still get its answer; it is not stored), then broadcasts. Once it resolves, no fetch that starts
   * afterwards returns a value loaded before it. With a known version (given, or from L2), L2 gets
   * its tombstone first, so no flight can read the old entry once L1 has changed. The one way to
   * delete an id.
   */
  invalidate(id: K, options?: ChangeOptions): Promise<ChangeResult> {
    return this.#change('invalidate', id, (key) => this.#changes.invalidate(key, options))
  }

  /**
   * Makes every row carrying one of `tags` (from a loader's `setTags`, a batch loader's, or a put's
   * `tags`) stale, in O(1) whatever the number of rows: each tag gets a new version (in L2 first,
   * where every process reads it), the rows born before it answer no read (not as a hit, not from
   * L2, not as a graced value; `peek` and `has` do not see them), and every flight in progress is
   * fenced; then each tag is broadcast. Once it resolves, no fetch that starts afterwards, here or
   * in a process sharing the L2, returns a value loaded before it (another process's own rows go as
   * soon as the bus delivers). On a namespace it reaches that namespace's rows only; on the base
   * table, every namespace's too. `options.version`: the least version the tags get. Counted in `tag_invalidations`.
   */
  invalidateTags(tags: readonly string[], options?: ChangeOptions): Promise<ChangeResult> {
    if (this.#viewClosed) return Promise.reject(this.#viewClosedError('invalidateTags', undefined))
    return this.#changes.invalidateTags(this.#scope, tags, options)
  }

  /**
   * A view of this table with its own key space (a tenant, an environment): the same owner, rows,
   * capacity, L2 and bus, and its own ids, which never meet the table's (or another namespace's)
   * in any layer. Its `clear()` drops its rows only, in every process, in O(1) in L2 (its mark gets
   * a new version, like a tag), and its `invalidateTags` reaches its rows only; the base table's
   * `clear()` and `invalidateTags` reach every namespace. Its `stats()` are the table's. Closing
   * it closes nothing shared: it refuses further calls. Namespaces nest, at most four deep; a
   * name is a non-empty string of at most 256 characters. A bad name throws a `TypeError` (a `RangeError` when too long, or nested too deep).
   */
  namespace(name: string): Table<V, K> {
    if (this.#viewClosed) throw this.#viewClosedError('namespace', undefined)
    if (this.#owner.closed) throw new TableClosedError(this.name, undefined, 'namespace')
    return new Table<V, K>({}, new ViewOf(this, this.#scope.child(name)))
  }

  /**
   * Drops every row of the table and fences every flight in progress (their waiters still get their
   * answers, which are not stored); with an L2, no entry written before the clear is read again, by
   * any process (O(1): the table moves to a new generation of L2 keys); with a bus, every instance
   * drops its rows too. Counted in `clears`. Resolves once this instance's rows are gone. On a
   * namespace view: drops that namespace's rows only (nested ones included), in every process, in
   * O(1) in L2 (its mark gets a new version, like a tag; counted in `tag_invalidations`).
   */
  clear(): Promise<ClearResult> {
    if (this.#scope === ROOT_SCOPE) return this.#changes.clear()
    if (this.#viewClosed) return Promise.reject(this.#viewClosedError('clear', undefined))
    return this.#changes.clearScope(this.#scope)
  }

  /**
   * The value of `id`'s live row, without a load, a counter or a mark of use: `undefined` when there
   * is none (or it is a negative row: tell the two apart with {@link has}). A graced row is not live.
   */
  peek(id: K): V | undefined {
    const key = this.#keyOf('peek', id)
    const value = this.#rows.liveAt(this.#rows.find(key), this.#clock.now())
    return value === NOT_LIVE ? undefined : value
  }

  /** True when `id` has a live row: a fetch now would be a hit (a negative row included). No counter, no mark of use. */
  has(id: K): boolean {
    const key = this.#keyOf('has', id)
    return this.#rows.liveAt(this.#rows.find(key), this.#clock.now()) !== NOT_LIVE
  }

  /** Rows held now: the same figure as `stats().size` (expired rows and tombstones count until swept or replaced). */
  get size(): number {
    return this.#rows.size
  }

  /**
   * The single-flight gate at run time. Off: every miss starts its own flight, with the same TTL,
   * jitter and negative caching; flights already in progress keep answering the waiters they have.
   */
  setCoalescing(on: boolean): void {
    if (typeof on !== 'boolean') throw badArgument(TypeError, `setCoalescing takes a boolean, got ${describe(on)}`)
    this.#owner.send(msg.gate(on))
  }

  /**
   * Stops the sweeper, refuses new fetches (`TableClosedError`), lets flights in progress answer
   * their waiters (each within its bound: `loadTimeout`, plus a lease's wait and five L2 timeouts),
   * then stops the owner; with `closeStores`, then closes the `l2` and `bus` it was given.
   * Idempotent: every call returns the same promise, which resolves once all that is done. On a
   * namespace view: the view refuses further calls, nothing shared is closed, and every call returns
   * the same promise, already resolved.
   */
  close(): Promise<void> {
    if (this.#scope !== ROOT_SCOPE) {
      this.#viewClosed = true
      return VIEW_CLOSED
    }
    return this.#owner.close()
  }

  /** `await using` support: the same as {@link close}. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close()
  }

  /** A frozen snapshot of the counters, `size`, `inflight` and `hit_rate`. */
  stats(): Stats {
    const state = this.#owner.state
    return snapshot(this.#reads, state.counters, state.rows.size, state.rows.weight, state.flights.running)
  }

  /** The refusal of `op` by this namespace view once closed: it names the namespace, as the table itself may still be open. */
  #viewClosedError(op: ClosedCall, id: Id | undefined): TableClosedError {
    const path = this.#scope.path.map((name) => JSON.stringify(name)).join(' / ')
    return new TableClosedError(this.name, id, op, `namespace ${path} of table "${this.name}"`)
  }

  /** The key of `id` in this table's scope; throws a TypeError/RangeError naming `op` for an id no caller may give, and `TableClosedError` on a closed view. */
  #keyOf(op: 'peek' | 'has' | 'put' | 'invalidate', id: Id): Id {
    if (this.#viewClosed) throw this.#viewClosedError(op, id)
    const bad = badCallerId(op, id)
    if (bad !== undefined) throw bad
    return this.#scope.key(id)
  }

  /** A put or invalidate of `id`, under its key in this table's scope; bad input rejects. */
  #change(op: 'put' | 'invalidate', id: Id, change: (key: Id) => Promise<ChangeResult>): Promise<ChangeResult> {
    let key: Id
    try {
      key = this.#keyOf(op, id)
    } catch (error) {
      return Promise.reject(error)
    }
    return change(key)
  }

  /**
   * A plain read of the base table (`fetch` and `get` call it for a read with no options, while
   * nobody watches `echostore:fetch`, once they know their loader is one).
   * First the herd's shortcut: a read of the id of this turn's last plain miss takes that miss's
   * promise, counted a miss, with no other check and no lookup (see `Mailbox.repeat` for why none is
   * needed: that id has no row this turn and is a valid id of the base table, a closed table has no
   * last miss, and no loader of the id is inside its synchronous part); then, for an id a caller may
   * give on an open table, straight to {@link #read} (no allocation on the way to a hit); else
   * {@link #dispatch}. Kept small, so the compiler inlines it and {@link #read} into the public
   * read that calls it: a hit, or a herd's waiter, runs only these.
   */
  #plain(op: 'fetch' | 'get', id: Id, origin: Origin<V>): Promise<V | undefined> {
    const repeat = this.#owner.repeat(id)
    if (repeat !== undefined) {
      this.#reads[R.misses]++
      return repeat
    }
    if (!isMarked(id) && !this.#owner.closed) return this.#read(id, origin, undefined, undefined, op)
    return this.#dispatch(op, id, origin, undefined)
  }

  /**
   * Any read but a plain one of the base table: in a namespace view (or for an id no caller may
   * give, which rejects) the id is checked and read under its key, its loader asked with the
   * caller's id (see {@link #fetchInScope}); a traced read goes through {@link #traced}, any other
   * through {@link #readChecked}.
   */
  #dispatch(op: 'fetch' | 'get', id: Id, origin: Origin<V>, options: FetchOptions | undefined): Promise<V | undefined> {
    if (this.#scope !== ROOT_SCOPE || isMarked(id)) return this.#fetchInScope(op, id, origin, options)
    if (fetchWatched.hasSubscribers) return this.#traced(op, id, id, origin, options)
    return this.#readChecked(op, id, origin, options)
  }

  /** {@link #dispatch} in a namespace view, or of a marked id: refused, or read under its key with the caller's id given to the loader. */
  #fetchInScope(op: 'fetch' | 'get', id: Id, origin: Origin<V>, options: FetchOptions | undefined): Promise<V | undefined> {
    const refused = this.#refusedInScope(op, id, origin)
    if (refused !== undefined) return Promise.reject(refused)
    const key = this.#scope.key(id)
    const load = typeof origin === 'function' ? viewLoader(origin, id) : this.#viewOrigin!
    if (fetchWatched.hasSubscribers) return this.#traced(op, id, key, load, options)
    if (options === undefined && (typeof load === 'function' || load instanceof Batch) && !this.#owner.closed) return this.#read(key, load, undefined)
    return this.#readChecked(op, key, load, options)
  }

  /**
   * Why a fetch or get in a namespace view, or of a marked id, is refused (a closed view, an id no
   * caller may give, a loader that is not one), checked before the loader is wrapped to be asked
   * with the caller's id; `undefined` when it may go on.
   */
  #refusedInScope(op: 'fetch' | 'get', id: Id, origin: Origin<V>): Error | undefined {
    if (this.#viewClosed) return this.#viewClosedError(op, id)
    const bad = badCallerId(op, id)
    if (bad !== undefined) return bad
    if (typeof origin !== 'function' && !(origin instanceof Batch)) return badArgument(TypeError, `${op}(${showId(id)}) needs a loader function, got ${describe(origin)}`)
    return undefined
  }

  /** A read of `key` under `echostore:fetch`, while someone subscribes to it: its record names the caller's `id`. */
  #traced(op: 'fetch' | 'get', id: Id, key: Id, origin: Origin<V>, options: FetchOptions | undefined): Promise<V | undefined> {
    return traceFetch(this.name, { id }, (trace) => this.#readChecked(op, key, origin, options, trace))
  }

  /** {@link #readMany}, under `echostore:fetch` when someone subscribes to it. */
  #readManyTraced(op: 'fetchMany' | 'getMany', ids: readonly Id[], origin: Origin<V>, options: FetchOptions | undefined): Promise<Array<V | undefined>> {
    if (!fetchWatched.hasSubscribers) return this.#readMany(op, ids, origin, options, undefined)
    return traceFetch(this.name, { ids }, (trace) => this.#readMany(op, ids, origin, options, trace))
  }

  /** Every id of `ids` read with `origin` (each one read, counted as a hit or a miss), answered in their order; the first failed id in that order rejects the call. */
  async #readMany(op: 'fetchMany' | 'getMany', ids: readonly Id[], origin: Origin<V>, options: FetchOptions | undefined, trace: FetchTrace | undefined): Promise<Array<V | undefined>> {
    if (!Array.isArray(ids)) throw badArgument(TypeError, `${op}(ids) takes an array of ids, got ${describe(ids)}`)
    const bad = ids.findIndex((id) => badCallerId(op, id) !== undefined)
    if (bad >= 0) throw badCallerId(`${op}: ids[${bad}]`, ids[bad])!
    if (this.#viewClosed) throw this.#viewClosedError(op, undefined)
    if (this.#owner.closed) throw new TableClosedError(this.name, undefined, op)
    // The options are read and checked once, for every id: a refusal refuses the whole call before any id is read.
    const asked = options === undefined ? undefined : readFetchOptions(`${op}(ids)`, options)
    const aborted = asked?.signal === undefined ? undefined : abortedWith(`${op}(ids)`, asked.signal)
    // One listener on the caller's signal for the whole call, relayed to each id's wait: one per id
    // would pass Node's warning threshold (10 on one signal) on any page of ids.
    const relay = asked?.signal === undefined || aborted !== undefined ? undefined : relayed(asked.signal)
    const read = relay === undefined ? asked : { ...asked, signal: relay.signal }
    try {
      const given = ids
      if (this.#scope !== ROOT_SCOPE) ids = ids.map((id) => this.#scope.key(id))
      const values = new Array<V | undefined>(ids.length)
      // Live rows answer in place; a promise is made only for each id that misses (a repeated id joins the first's flight).
      const pending: Promise<V | undefined>[] = []
      const pendingAt: number[] = []
      for (let i = 0; i < ids.length; i++) {
        const id = ids[i]!
        if (read === undefined && trace === undefined) {
          const value = this.#rows.live(id, this.#clock)
          if (value !== NOT_LIVE) {
            this.#reads[R.hits]++
            if (value === undefined) this.#reads[R.negative_hits]++
            values[i] = value
            continue
          }
        }
        // A view's own `loader` is asked with the caller's id.
        const load = typeof origin === 'function' && given !== ids ? viewLoader(origin, given[i]!) : origin
        pending.push(read === undefined && trace === undefined ? this.#read(id, load, undefined) : this.#readWith(id, load, read ?? NO_OPTIONS, aborted, trace?.part()))
        pendingAt.push(i)
      }
      if (pending.length === 0) return values
      const outcomes = await Promise.allSettled(pending)
      for (let k = 0; k < outcomes.length; k++) {
        const outcome = outcomes[k]!
        if (outcome.status === 'rejected') throw outcome.reason // the first failed id, in the order of ids
        values[pendingAt[k]!] = outcome.value
      }
      return values
    } finally {
      relay?.stop()
    }
  }

  /** A miss under stale-while-revalidate: a graced row answers at once and refreshes in the background; `undefined` when the id has no graced row. */
  #stale(id: Id, loader: Origin<V>, trace: FetchTrace | undefined): Promise<V | undefined> | undefined {
    const now = this.#clock.now()
    const stale = this.#rows.graced(id, now)
    if (stale === NOT_LIVE) return undefined
    this.#owner.refresh(id, loader, now - this.#rows.expiryAt(this.#rows.find(id)))
    if (trace !== undefined) trace.outcome = 'stale'
    return Promise.resolve(stale)
  }

  /** A plain forced refresh, or a traced plain read (as a waiter of its own, so the owner can tell how it was answered); an untraced unforced plain miss is the shared one of `#miss`. */
  #plainMiss(id: Id, loader: Origin<V>, forced: boolean, trace: FetchTrace | undefined): Promise<V | undefined> {
    if (trace !== undefined) return this.#owner.wait(id, loader, { signal: undefined, timeout: undefined, softTimeout: undefined, forced, trace: trace.arm() })
    return this.#owner.forcedMiss(id, loader)
  }

  #hit(value: V | undefined): Promise<V | undefined> {
    this.#reads[R.hits]++
    if (value === undefined) this.#reads[R.negative_hits]++
    return Promise.resolve(value)
  }

  /**
   * The one lookup of a fetch, for a plain read (`read` undefined: the id is not validated yet) or a
   * checked one: the live row answers first (only valid ids are ever stored, so a live row means the
   * id is valid), unless the read forces a refresh; then {@link #miss}. Kept apart from the miss, and
   * small, so the compiler inlines it into the read that calls it (every hit runs only this).
   */
  #read(id: Id, loader: Origin<V>, read: FetchOptions | undefined, trace?: FetchTrace, op?: 'fetch' | 'get'): Promise<V | undefined> {
    if (read?.forceRefresh !== true) {
      const value = this.#rows.live(id, this.#clock)
      if (value !== NOT_LIVE) {
        if (trace !== undefined) trace.outcome = value === undefined ? 'negative' : 'hit'
        return this.#hit(value)
      }
    }
    return this.#miss(id, loader, read, trace, op)
  }

  /** A read {@link #read} found no live row for (or that forces a refresh): it joins or starts the id's flight, or takes a graced value. */
  #miss(id: Id, loader: Origin<V>, read: FetchOptions | undefined, trace: FetchTrace | undefined, op?: 'fetch' | 'get'): Promise<V | undefined> {
    // An id that is no key is refused as one, before anything else is checked, naming the call made.
    if (read === undefined && !isKey(id)) return this.#readChecked(op ?? 'fetch', id, loader, undefined)
    if (this.#owner.insideLoaderOf(id)) return Promise.reject(new SelfFetchError(this.name, callerIdOf(id)))
    this.#reads[R.misses]++
    const tagStale = this.#rows.tagged && this.#rows.staleByTags(id)
    const forced = read?.forceRefresh === true
    // Stale-while-revalidate applies whatever the caller passes: a graced value needs no waiting.
    const stale = this.#staleWhileRevalidate && !forced ? this.#stale(id, loader, trace) : undefined
    const plain = read === undefined || (read.signal === undefined && read.timeout === undefined && read.softTimeout === undefined)
    const shared = stale === undefined && plain && !forced && trace === undefined
    // Every read that finds a row older than one of its tags counts a `tag_stale`. A shared plain miss
    // carries it, counted once for each of its callers (a herd's repeats skip the row lookup, see
    // `Mailbox.repeat`); any other read counts it here.
    if (shared) return this.#owner.miss(id, loader, tagStale)
    if (tagStale) this.#owner.post(msg.count('tag_stale'))
    if (stale !== undefined) return stale
    if (plain) return this.#plainMiss(id, loader, forced, trace)
    const { signal, timeout, softTimeout } = read
    return this.#owner.wait(id, loader, { signal, timeout, softTimeout, forced, trace: trace?.arm() })
  }

  /**
   * A fetch off the plain path: the id (or a view's key), loader and options validated, then
   * {@link #read}. Never throws: bad input rejects, naming the caller's id; a closed table's
   * refusal names the call, `op`, too.
   */
  #readChecked(op: ReadCall, id: Id, loader: Origin<V>, options: FetchOptions | undefined, trace?: FetchTrace): Promise<V | undefined> {
    if (!isKey(id)) return Promise.reject(badId(op, id))
    if (typeof loader !== 'function' && !(loader instanceof Batch)) return Promise.reject(badArgument(TypeError, `${op}(${showId(callerIdOf(id))}) needs a loader function, got ${describe(loader)}`))
    if (this.#owner.closed) return Promise.reject(new TableClosedError(this.name, callerIdOf(id), op))
    if (options === undefined) return this.#read(id, loader, NO_OPTIONS, trace)
    let read: FetchOptions
    let aborted: { reason: unknown } | undefined
    try {
      const call = `${op}(${showId(callerIdOf(id))})`
      read = readFetchOptions(call, options)
      aborted = read.signal === undefined ? undefined : abortedWith(call, read.signal)
    } catch (error) {
      return Promise.reject(error)
    }
    return this.#readWith(id, loader, read, aborted, trace)
  }

  /** A read whose options were read and checked: refused when its signal had aborted (`aborted`, counted `cancelled`), else {@link #read}. */
  #readWith(id: Id, loader: Origin<V>, read: FetchOptions, aborted: { reason: unknown } | undefined, trace: FetchTrace | undefined): Promise<V | undefined> {
    if (aborted !== undefined) {
      this.#owner.post(msg.count('cancelled'))
      return Promise.reject(aborted.reason)
    }
    return this.#read(id, loader, read, trace)
  }
}

/**
 * A signal of the table's own that aborts, with the same reason, when the caller's `signal` does,
 * through one listener on it; `stop` removes that listener. Any number of waits may listen to it.
 */
function relayed(signal: AbortSignal): { signal: AbortSignal; stop(): void } {
  const controller = new AbortController()
  setMaxListeners(0, controller.signal)
  const relay = () => controller.abort(abortReason(signal))
  signal.addEventListener('abort', relay, { once: true })
  return {
    signal: controller.signal,
    stop() {
      try {
        signal.removeEventListener('abort', relay)
      } catch {
        // a hostile signal: the listener fires at most once into a call that has settled
      }
    },
  }
}

/**
 * Whether `signal` has aborted (and its reason), read once; throws a TypeError naming the `call` and
 * the option when it cannot be read (a member that throws: what it threw is the `cause`).
 */
function abortedWith(call: string, signal: AbortSignal): { reason: unknown } | undefined {
  try {
    if (signal.aborted) return { reason: signal.reason }
    // Listened to once here, so a signal that cannot be listened to is refused before the read is
    // counted or loads anything; the owner listens to it as the caller waits.
    signal.addEventListener('abort', IGNORE)
    signal.removeEventListener('abort', IGNORE)
    return undefined
  } catch (error) {
    throw badArgument(TypeError, `${call} option "signal" could not be used (${reasonOf(error)})`, { cause: error })
  }
}

/** Every option a fetch takes. */
const FETCH_OPTIONS = ['signal', 'timeout', 'softTimeout', 'forceRefresh'] as const satisfies readonly (keyof FetchOptions)[]

/** The listener {@link abortedWith} tries a signal with. */
const IGNORE = (): void => {}

/** A read's options when it has none. */
const NO_OPTIONS: FetchOptions = Object.freeze({})

/**
 * Reads and checks a read's options, each once; throws a TypeError/RangeError naming the `call`
 * (`fetch("id")`, the caller's id; `getMany(ids)`) and the bad option (also for an object whose getters throw).
 */
function readFetchOptions(call: string, options: FetchOptions): FetchOptions {
  const { signal, timeout, softTimeout, forceRefresh } = readOptions(options, FETCH_OPTIONS, call) as FetchOptions
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw badArgument(TypeError, `${call} option "signal" must be an AbortSignal, got ${describe(signal)}`)
  }
  if (timeout !== undefined && !(typeof timeout === 'number' && timeout > 0 && timeout <= MAX_TIMER_MS)) {
    throw badNumber(timeout, `${call} option "timeout" must be a number of ms in (0, ${MAX_TIMER_MS}], got ${describe(timeout)}`)
  }
  if (softTimeout !== undefined && !(typeof softTimeout === 'number' && softTimeout >= 1 && softTimeout <= MAX_TIMER_MS)) {
    throw badNumber(softTimeout, `${call} option "softTimeout" must be a number of ms in [1, ${MAX_TIMER_MS}], got ${describe(softTimeout)}`)
  }
  if (forceRefresh !== undefined && typeof forceRefresh !== 'boolean') {
    throw badArgument(TypeError, `${call} option "forceRefresh" must be a boolean, got ${describe(forceRefresh)}`)
  }
  return { signal, timeout, softTimeout, forceRefresh }
}

/**
 * Creates a table of values `V`, fetched by ids of type `K` (default `string`; say
 * `createTable<User, number>()` and the loader receives a `number`, or `Id` for both). The loader
 * answers a `V`: a table that caches "absent" says so in `V` (`createTable<User | undefined>()`). Options are validated here: a
 * bad one throws a TypeError/RangeError naming it and the value.
 */
export function createTable<V, K extends Id = string>(options: TableOptions<V, K> = {}): Table<V, K> {
  if (!sampleKept) keepSampleTable()
  return new Table<V, K>(options)
}

/** Set once the process's sample table is made (see {@link keepSampleTable}); written only there. */
let sampleKept = false

/**
 * Makes one table, closed at once and never read, and keeps it for the life of the process, so the
 * maps of the objects every table is made of outlive the tables a process closes (see
 * `core/kept-shapes.ts`). Made by the first {@link createTable}: importing makes nothing. It runs
 * on the system clock whatever clock the caller's table has: its sweeper sets one Node timer,
 * which its `close()` clears before this returns, so no timer of it outlives the call.
 */
function keepSampleTable(): void {
  sampleKept = true
  const sample = new Table<unknown>({ name: 'echostore:sample', capacity: 1 })
  void sample.close()
  keepShape(sample)
}

/** What the constructor makes a namespace view of (see `Table.namespace`): the table it shares everything with, and its own key space. */
class ViewOf<V, K extends Id> {
  constructor(
    readonly base: Table<V, K>,
    readonly scope: Scope,
  ) {}
}

/** The read calls that go through `#readChecked`. */
type ReadCall = 'fetch' | 'get' | 'fetchMany' | 'getMany'

/** What a view's `close()` returns, every call: closing a view closes nothing shared, so it is done at once (the table's own `close()` returns the same promise every call too). */
const VIEW_CLOSED: Promise<void> = Promise.resolve()

/** The error of `get`/`getMany` on a table without its own loader. */
function noOrigin(op: 'get' | 'getMany'): TypeError {
  return badArgument(TypeError, `${op} needs the table option "loader" or "batchLoader" (createTable({ loader })); or read with fetch(id, loader)`) as TypeError
}
