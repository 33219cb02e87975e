import mitt, { type Emitter } from 'mitt'
import type { Clock, TimerHandle } from './clock.js'
import { C, type Stats, newCounters, snapshot } from './counters.js'
import { FetchTimeoutError, TableClosedError } from './errors.js'
import { type Id, describe, isId } from './id.js'
import { type TableOptions, resolveOptions } from './options.js'
import { ev } from './owner/events.js'
import type { Loader } from './owner/flight.js'
import { type Owner, startOwner } from './owner/owner.js'
import { Waiter } from './owner/waiter.js'
import type { Row } from './rows.js'
import { Sweeper } from './sweeper.js'
import type { TableEvents } from './table-events.js'

/** Per-call options of {@link Table.fetch}. */
export interface FetchOptions {
  /** Cancels this caller only: it rejects with `signal.reason`. */
  signal?: AbortSignal
  /** This caller's own deadline in ms (finite, > 0): it rejects with `FetchTimeoutError`; the flight goes on. */
  timeout?: number
}

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
  /** The table's events (a mitt emitter): `load`, `fill`, `error`, `sweep`. */
  readonly events: Emitter<TableEvents> = mitt<TableEvents>()

  readonly #rows = new Map<Id, Row<V>>()
  readonly #counters = newCounters()
  readonly #clock: Clock
  readonly #owner: Owner<V>
  readonly #sweeper: Sweeper
  readonly #clearTimer: (handle: TimerHandle) => void
  #closing: Promise<void> | undefined = undefined

  /** Use {@link createTable}. */
  constructor(options: TableOptions = {}) {
    const resolved = resolveOptions(options)
    const clock = resolved.clock
    this.name = resolved.name
    this.#clock = clock
    this.#clearTimer = (handle) => clock.clearTimeout(handle)
    this.#sweeper = new Sweeper(clock, resolved.sweepInterval, (now, first) => this.#owner.send(ev.sweep(now, first)))
    this.#owner = startOwner<V>({
      options: resolved,
      rows: this.#rows,
      counters: this.#counters,
      sweeper: this.#sweeper,
      events: this.events,
    })
    this.#sweeper.start()
  }

  /**
   * Reads `id` through the table. A live row answers at once; otherwise the caller joins the id's
   * flight, or starts one that calls `loader` (only the first caller's loader runs). Resolves to the
   * value, or `undefined` when the loader found nothing; rejects with the loader's error (the same
   * object for every waiter), `FetchTimeoutError`, `signal.reason`, `LoadTimeoutError`, or
   * `TableClosedError`; a bad id or loader rejects with a `TypeError`.
   */
  fetch(id: Id, loader: Loader<V>, options?: FetchOptions): Promise<V | undefined> {
    if (!isId(id)) return Promise.reject(new TypeError(`echostore: fetch id must be a string or a finite number, got ${describe(id)}`))
    if (typeof loader !== 'function') {
      return Promise.reject(new TypeError(`echostore: fetch(${JSON.stringify(id)}) needs a loader function, got ${describe(loader)}`))
    }
    if (this.#closing !== undefined) return Promise.reject(new TableClosedError(this.name, id))
    if (options !== undefined) return this.#fetchWithOptions(id, loader, options)
    const row = this.#rows.get(id)
    if (row !== undefined && row.expiresAt > this.#clock.now()) return this.#hit(row)
    this.#counters[C.misses]++
    return this.#miss(id, loader, undefined, undefined)
  }

  /** Writes `value` as the row for `id` (through the owner), as a fill would. `undefined` writes a negative row. */
  put(id: Id, value: V | undefined): Promise<void> {
    const refused = this.#refuse(id, 'put')
    if (refused !== undefined) return refused
    this.#owner.send(ev.put(id, value))
    return Promise.resolve()
  }

  /** Drops the row for `id` (through the owner); the next fetch loads again. */
  invalidate(id: Id): Promise<void> {
    const refused = this.#refuse(id, 'invalidate')
    if (refused !== undefined) return refused
    this.#owner.send(ev.invalidate(id))
    return Promise.resolve()
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
      this.#owner.send(ev.close())
    }
    return this.#closing
  }

  /** A frozen snapshot of the counters, `size`, `inflight` and `hit_rate`. */
  stats(): Stats {
    return snapshot(this.#counters, this.#rows.size, this.#owner.inflight())
  }

  #hit(row: Row<V>): Promise<V | undefined> {
    this.#counters[C.hits]++
    if (row.value === undefined) this.#counters[C.negative_hits]++
    return Promise.resolve(row.value)
  }

  #fetchWithOptions(id: Id, loader: Loader<V>, options: FetchOptions): Promise<V | undefined> {
    if (options === null || typeof options !== 'object') {
      return Promise.reject(new TypeError(`echostore: fetch(${JSON.stringify(id)}) options must be an object, got ${describe(options)}`))
    }
    const { signal, timeout } = options
    if (signal !== undefined && !(signal instanceof AbortSignal)) {
      return Promise.reject(new TypeError(`echostore: fetch(${JSON.stringify(id)}) option "signal" must be an AbortSignal, got ${describe(signal)}`))
    }
    if (timeout !== undefined && !(typeof timeout === 'number' && Number.isFinite(timeout) && timeout > 0)) {
      const Kind = typeof timeout === 'number' ? RangeError : TypeError
      return Promise.reject(new Kind(`echostore: fetch(${JSON.stringify(id)}) option "timeout" must be a finite number > 0 (ms), got ${describe(timeout)}`))
    }
    if (signal?.aborted) {
      this.#counters[C.cancelled]++
      return Promise.reject(signal.reason)
    }
    const row = this.#rows.get(id)
    if (row !== undefined && row.expiresAt > this.#clock.now()) return this.#hit(row)
    this.#counters[C.misses]++
    return this.#miss(id, loader, signal, timeout)
  }

  #miss(id: Id, loader: Loader<V>, signal: AbortSignal | undefined, timeout: number | undefined): Promise<V | undefined> {
    let waiter!: Waiter<V>
    const answer = new Promise<V | undefined>((resolve, reject) => {
      waiter = new Waiter<V>(resolve, reject, this.#clearTimer)
    })
    const owner = this.#owner
    owner.send(ev.miss(id, loader, waiter))
    if (waiter.settled) return answer
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

  #refuse(id: Id, op: string): Promise<void> | undefined {
    if (!isId(id)) return Promise.reject(new TypeError(`echostore: ${op} id must be a string or a finite number, got ${describe(id)}`))
    if (this.#closing !== undefined) return Promise.reject(new TableClosedError(this.name, id))
    return undefined
  }
}

/** Creates a table. Options are validated here: a bad one throws a TypeError/RangeError naming it and the value. */
export function createTable<V>(options: TableOptions = {}): Table<V> {
  return new Table<V>(options)
}
