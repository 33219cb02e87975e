import { randomUUID } from 'node:crypto'
import mitt, { type Emitter } from 'mitt'
import type { Bus, BusDelivery } from './bus/bus.js'
import { parseCoherenceMessage } from './bus/message.js'
import { type Clock, MAX_TIMER_MS, type TimerHandle } from './clock.js'
import { C, type Stats, newCounters, snapshot } from './counters.js'
import { emitSafely } from './emit-safely.js'
import { FetchTimeoutError, TableClosedError } from './errors.js'
import { type Id, describe, isId } from './id.js'
import { L2Facade } from './l2/facade.js'
import { type TableOptions, resolveOptions } from './options.js'
import { type ChangeReply, type OwnerEvent, ev } from './owner/events.js'
import type { Loader } from './owner/flight.js'
import { type Owner, startOwner } from './owner/owner.js'
import { Waiter } from './owner/waiter.js'
import { RowStore } from './row-store.js'
import { type Expiry, expiryPolicy } from './rows.js'
import { Sweeper } from './sweeper.js'
import type { TableEvents } from './table-events.js'

/** Per-call options of {@link Table.fetch}. */
export interface FetchOptions {
  /** Cancels this caller only: it rejects with `signal.reason`. */
  signal?: AbortSignal
  /** This caller's own deadline in ms (finite, > 0): it rejects with `FetchTimeoutError`; the flight goes on. */
  timeout?: number
}

/** Options of {@link Table.put} and {@link Table.invalidate}. */
export interface ChangeOptions {
  /**
   * The version of this change: a number that grows with each change of the id (a row version, an
   * `updated_at` in ms). Default: the next version (L2's per-id counter when an L2 is set, else
   * the highest version this table knows + 1).
   */
  version?: number
}

/** What a put or invalidate did. */
export interface ChangeResult {
  /** The version the change carried (given, or assigned). */
  version: number
  /** False when something newer was already known (L1 or L2): the change was refused locally, but still broadcast. */
  applied: boolean
  /**
   * What L2 did with the change: `'written'`; `'refused'` (L2, or this table, holds a newer version); `'failed'` (an
   * error, a timeout or an open breaker: other processes may read the old entry from L2 until it
   * expires, so retry the change); `'none'` (no L2 configured).
   */
  l2: 'written' | 'refused' | 'failed' | 'none'
  /** True when the change reached the bus; false when there is no bus, or publishing failed or took longer than {@link PUBLISH_TIMEOUT}. */
  broadcast: boolean
}

/** How an L2 write answered, as a {@link ChangeResult}'s `l2`. */
function l2Outcome(written: boolean | undefined): ChangeResult['l2'] {
  return written === true ? 'written' : written === false ? 'refused' : 'failed'
}

/** Bound in ms (on the table's clock) on publishing one change to the bus; past it `bus_errors` counts it. */
export const PUBLISH_TIMEOUT = 1_000

/**
 * A read-through table: the facade over one owner actor. `fetch` answers hits straight from the
 * rows (a Map lookup, an expiry check and a counter bump, no message); a miss becomes a message to
 * the owner, which coalesces it onto the id's single flight.
 */
export class Table<V> {
  /** A frozen snapshot of a table's counters, `size`, `inflight` and `hit_rate`. */
  static stats(table: { stats(): Stats }): Stats {
    return table.stats()
  }

  /** The table's name (in errors, events, L2 keys and bus messages). */
  readonly name: string
  /** The table's events (a mitt emitter): `load`, `fill`, `error`, `sweep`, `l2_error`, `coherence`, `gap`. A listener that throws is reported as a process warning; the table goes on. */
  readonly events: Emitter<TableEvents> = mitt<TableEvents>()

  readonly #rows: RowStore<V>
  readonly #counters = newCounters()
  readonly #clock: Clock
  readonly #owner: Owner<V>
  readonly #sweeper: Sweeper
  readonly #clearTimer: (handle: TimerHandle) => void
  readonly #expiry: Expiry
  readonly #l2: L2Facade | undefined
  readonly #bus: Bus | undefined
  readonly #unsubscribe: (() => void) | undefined
  readonly #tombstoneLife: number
  /** Identifies this table instance on the bus; it ignores its own messages. */
  readonly origin: string
  #closing: Promise<void> | undefined = undefined

  /** Use {@link createTable}. */
  constructor(options: TableOptions = {}) {
    const resolved = resolveOptions(options)
    const clock = resolved.clock
    this.name = resolved.name
    this.#clock = clock
    this.origin = `${resolved.name}:${randomUUID()}`
    this.#clearTimer = (handle) => clock.clearTimeout(handle)
    this.#expiry = expiryPolicy(resolved.ttl, resolved.negativeTtl, resolved.jitter, resolved.random)
    this.#tombstoneLife = Math.max(resolved.ttl, resolved.loadTimeout)
    this.#rows = new RowStore<V>(resolved.capacity)
    this.#l2 = resolved.l2 && new L2Facade(resolved.l2, resolved.name, clock, this.#counters, this.events)
    this.#sweeper = new Sweeper(clock, Math.max(resolved.sweepInterval, resolved.ttl / 16), resolved.sweepInterval, (now, first) => this.#owner.send(ev.sweep(now, first)))
    this.#owner = startOwner<V>({
      options: resolved,
      rows: this.#rows,
      counters: this.#counters,
      sweeper: this.#sweeper,
      events: this.events,
      expiry: this.#expiry,
      l2: this.#l2,
    })
    this.#sweeper.start()
    this.#bus = resolved.bus
    this.#unsubscribe = this.#bus?.subscribe((delivery) => this.#receive(delivery))
  }

  /**
   * Reads `id` through the table. A live row answers at once; otherwise the caller joins the id's
   * flight, or starts one that calls `loader` (only the first caller's loader runs). Resolves to the
   * value, or `undefined` when the loader found nothing; rejects with the loader's error (the same
   * object for every waiter), `FetchTimeoutError`, `signal.reason`, `LoadTimeoutError`, or
   * `TableClosedError`; a bad id or loader rejects with a `TypeError`.
   */
  fetch(id: Id, loader: Loader<V>, options?: FetchOptions): Promise<V | undefined> {
    // The plain path (no options): only valid ids are ever stored, so a row found means the id is valid.
    const rows = this.#rows
    const slot = rows.slots.get(id)
    if (options === undefined && typeof loader === 'function' && this.#closing === undefined && (slot !== undefined || isId(id))) {
      if (slot !== undefined && rows.expires[slot]! > this.#clock.now()) return this.#hit(rows.values[slot])
      this.#counters[C.misses]++
      return this.#miss(id, loader, undefined, undefined)
    }
    return this.#lookup(id, loader, options)
  }

  /**
   * Writes `value` as the row for `id` in both layers (L2 first, version-guarded), then broadcasts
   * the change on the bus. `undefined` writes a negative row. A change older than what is already
   * known does not change L1, is refused by L2, still resolves (`applied: false`) and is still broadcast.
   */
  async put(id: Id, value: V | undefined, options?: ChangeOptions): Promise<ChangeResult> {
    this.#checkChange(id, options, 'put')
    const given = await this.#versionFor(id, options)
    const now = this.#clock.now()
    const expiresAt = this.#expiry.draw(value, now)
    let l2: ChangeResult['l2'] = 'none'
    if (this.#l2 !== undefined) {
      if (given === undefined) l2 = 'failed' // L2 could not even issue a version
      else if (given < this.#owner.known(id)) l2 = 'refused' // older than this table knows: L2 must not get it either
      else {
        const write =
          expiresAt === undefined
            ? { kind: 'tombstone' as const, version: given, ttl: Math.ceil(this.#tombstoneLife) }
            : { kind: value === undefined ? ('absent' as const) : ('value' as const), value, version: given, ttl: Math.max(1, Math.ceil(expiresAt - now)) }
        l2 = l2Outcome(await this.#l2.set(id, write))
      }
    }
    const { applied, version } = await this.#change((reply) => ev.put(id, value, expiresAt, given, l2 === 'refused', reply), given)
    return { applied: applied && l2 !== 'refused', version, l2, broadcast: await this.#broadcast(id, version, 'put') }
  }

  /**
   * Drops the row for `id` in both layers and leaves a tombstone carrying the version (in L2 it lives
   * `max(ttl, loadTimeout)` and reads as a miss), fences a flight in progress for the id (its waiters
   * still get its answer; it is not stored), then broadcasts. Once it resolves, no fetch that starts
   * afterwards returns a value loaded before it. With a known version (given, or from L2), L2 gets
   * its tombstone first, so no flight can read the old entry once L1 has changed.
   */
  async invalidate(id: Id, options?: ChangeOptions): Promise<ChangeResult> {
    this.#checkChange(id, options, 'invalidate')
    const given = await this.#versionFor(id, options)
    const bury = (version: number) => this.#l2!.set(id, { kind: 'tombstone', version, ttl: Math.ceil(this.#tombstoneLife) })
    let l2: ChangeResult['l2'] = 'none'
    if (this.#l2 !== undefined && given !== undefined) l2 = given < this.#owner.known(id) ? 'refused' : l2Outcome(await bury(given))
    const { applied, version } = await this.#change((reply) => ev.invalidate(id, given, reply), given)
    if (this.#l2 !== undefined && given === undefined) l2 = l2Outcome(await bury(version))
    return { applied: applied && l2 !== 'refused', version, l2, broadcast: await this.#broadcast(id, version, 'invalidate') }
  }

  /**
   * The single-flight gate at run time. Off: every miss starts its own flight, with the same TTL,
   * jitter and negative caching; flights already in progress keep answering the waiters they have.
   */
  setCoalescing(on: boolean): void {
    if (typeof on !== 'boolean') throw new TypeError(`echostore: setCoalescing takes a boolean, got ${describe(on)}`)
    this.#owner.send(ev.gate(on))
  }

  /**
   * Stops the sweeper, refuses new fetches (`TableClosedError`), lets flights in progress answer
   * their waiters (bounded by `loadTimeout`), then stops the owner. Idempotent: every call returns
   * the same promise, which resolves once the owner has stopped.
   */
  close(): Promise<void> {
    if (this.#closing === undefined) {
      this.#closing = this.#owner.stopped
      this.#unsubscribe?.()
      this.#owner.send(ev.close())
    }
    return this.#closing
  }

  /** A frozen snapshot of the counters, `size`, `inflight` and `hit_rate`. */
  stats(): Stats {
    return snapshot(this.#counters, this.#rows.size, this.#owner.inflight())
  }

  #hit(value: V | undefined): Promise<V | undefined> {
    this.#counters[C.hits]++
    if (value === undefined) this.#counters[C.negative_hits]++
    return Promise.resolve(value)
  }

  /** Everything but the plain path: validation, options, the lookup again, and the miss. */
  #lookup(id: Id, loader: Loader<V>, options: FetchOptions | undefined): Promise<V | undefined> {
    if (!isId(id)) return Promise.reject(new TypeError(`echostore: fetch id must be a string or a finite number, got ${describe(id)}`))
    if (typeof loader !== 'function') {
      return Promise.reject(new TypeError(`echostore: fetch(${JSON.stringify(id)}) needs a loader function, got ${describe(loader)}`))
    }
    if (this.#closing !== undefined) return Promise.reject(new TableClosedError(this.name, id))
    let signal: AbortSignal | undefined
    let timeout: number | undefined
    if (options !== undefined) {
      if (options === null || typeof options !== 'object') {
        return Promise.reject(new TypeError(`echostore: fetch(${JSON.stringify(id)}) options must be an object, got ${describe(options)}`))
      }
      ;({ signal, timeout } = options)
      if (signal !== undefined && !(signal instanceof AbortSignal)) {
        return Promise.reject(new TypeError(`echostore: fetch(${JSON.stringify(id)}) option "signal" must be an AbortSignal, got ${describe(signal)}`))
      }
      if (timeout !== undefined && !(typeof timeout === 'number' && timeout > 0 && timeout <= MAX_TIMER_MS)) {
        const Kind = typeof timeout === 'number' ? RangeError : TypeError
        return Promise.reject(new Kind(`echostore: fetch(${JSON.stringify(id)}) option "timeout" must be a number of ms in (0, ${MAX_TIMER_MS}], got ${describe(timeout)}`))
      }
      if (signal?.aborted) {
        this.#counters[C.cancelled]++
        return Promise.reject(signal.reason)
      }
    }
    const rows = this.#rows
    const slot = rows.slots.get(id)
    if (slot !== undefined && rows.expires[slot]! > this.#clock.now()) return this.#hit(rows.values[slot])
    this.#counters[C.misses]++
    return this.#miss(id, loader, signal, timeout)
  }

  #miss(id: Id, loader: Loader<V>, signal: AbortSignal | undefined, timeout: number | undefined): Promise<V | undefined> {
    const owner = this.#owner
    if (signal === undefined && timeout === undefined && !owner.busy()) {
      // A plain caller shares its flight's one promise: a join is posted (batched with the rest of
      // the herd); a miss that starts a flight is sent, so its loader starts before fetch returns.
      const flight = owner.joinable(id)
      if (flight !== undefined) {
        // The first join since the owner last counted posts one message; the rest only count.
        if (flight.joined++ === flight.joinsCounted) owner.post(ev.join(flight))
        return flight.shared()
      }
      const miss = ev.miss(id, loader, undefined)
      owner.send(miss)
      return miss.flight === undefined ? Promise.reject(new TableClosedError(this.name, id)) : miss.flight.shared()
    }
    return this.#waitAlone(id, loader, signal, timeout)
  }

  /** A caller with its own promise: it has a signal or a deadline, or the owner is busy (a re-entrant fetch). */
  #waitAlone(id: Id, loader: Loader<V>, signal: AbortSignal | undefined, timeout: number | undefined): Promise<V | undefined> {
    let waiter!: Waiter<V>
    const answer = new Promise<V | undefined>((resolve, reject) => {
      waiter = new Waiter<V>(resolve, reject, this.#clearTimer)
    })
    const owner = this.#owner
    const miss = ev.miss(id, loader, waiter)
    if (owner.joinable(id)) owner.post(miss)
    else owner.send(miss)
    if (waiter.settled) return answer // answered at once (from a row the flushed batch just filled): nothing to install
    if (timeout !== undefined) {
      const error = () => new FetchTimeoutError(this.name, id, timeout)
      waiter.deadline = this.#clock.setTimeout(() => owner.send(ev.waiterLeft(waiter, 'timeout', error())), timeout)
    }
    if (signal !== undefined) {
      waiter.signal = signal
      waiter.onAbort = () => owner.send(ev.waiterLeft(waiter, 'cancel', signal.reason))
      signal.addEventListener('abort', waiter.onAbort, { once: true })
    }
    return answer
  }

  #checkChange(id: Id, options: ChangeOptions | undefined, op: 'put' | 'invalidate'): void {
    if (!isId(id)) throw new TypeError(`echostore: ${op} id must be a string or a finite number, got ${describe(id)}`)
    if (this.#closing !== undefined) throw new TableClosedError(this.name, id, op)
    const version = options?.version
    if (version !== undefined && !(Number.isSafeInteger(version) && version >= 0)) {
      const Kind = typeof version === 'number' ? RangeError : TypeError
      throw new Kind(`echostore: ${op}(${JSON.stringify(id)}) option "version" must be an integer ≥ 0, got ${describe(version)}`)
    }
  }

  /** The version a change carries: the caller's, else L2's next one; `undefined` lets the owner assign highest + 1. */
  async #versionFor(id: Id, options: ChangeOptions | undefined): Promise<number | undefined> {
    if (options?.version !== undefined) return options.version
    return this.#l2?.nextVersion(id)
  }

  /** Sends a change to the owner and waits for its reply; a closed owner answers "not applied". */
  #change(make: (reply: ChangeReply) => OwnerEvent<V>, given: number | undefined): Promise<{ applied: boolean; version: number }> {
    return new Promise((resolve) => {
      const sent = this.#owner.send(make((applied, version) => resolve({ applied, version })))
      if (!sent) resolve({ applied: false, version: given ?? 0 })
    })
  }

  /** Publishes a change, bounded by {@link PUBLISH_TIMEOUT} on the table's clock; never throws. */
  async #broadcast(id: Id, version: number, kind: 'put' | 'invalidate'): Promise<boolean> {
    const bus = this.#bus
    if (bus === undefined) return false
    const published = await new Promise<boolean>((resolve) => {
      const timer = this.#clock.setTimeout(() => resolve(false), PUBLISH_TIMEOUT)
      const done = (ok: boolean, error?: unknown) => {
        this.#clock.clearTimeout(timer)
        if (!ok && this.events.all.size > 0) emitSafely(this.events, 'error', { table: this.name, id, error })
        resolve(ok)
      }
      try {
        bus.publish({ table: this.name, id, version, kind, origin: this.origin }).then(() => done(true), (error: unknown) => done(false, error))
      } catch (error) {
        done(false, error)
      }
    })
    if (!published) this.#counters[C.bus_errors]++
    return published
  }

  /** A bus delivery: validated here, whatever transport brought it; never throws into the transport. */
  #receive(delivery: BusDelivery): void {
    try {
      if (delivery?.type === 'gap') {
        this.#owner.send(ev.gap())
        return
      }
      const parsed = delivery?.type === 'message' ? parseCoherenceMessage(delivery.message) : undefined
      if (parsed === undefined || !parsed.ok) {
        this.#counters[C.coh_invalid]++
        return
      }
      const { message } = parsed
      if (message.table !== this.name || message.origin === this.origin) return
      this.#owner.send(ev.coherence(message))
    } catch {
      this.#counters[C.coh_invalid]++
    }
  }
}

/** Creates a table. Options are validated here: a bad one throws a TypeError/RangeError naming it and the value. */
export function createTable<V>(options: TableOptions = {}): Table<V> {
  return new Table<V>(options)
}
