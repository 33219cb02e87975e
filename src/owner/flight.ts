import type { Clock } from '../clock.js'
import type { Id } from '../id.js'
import { type L2Facade, L2_DOWN } from '../l2/facade.js'
import type { Expiry } from '../rows.js'
import type { Waiter } from './waiter.js'

/** What a loader receives beside the id. */
export interface LoaderContext {
  /** Aborts when the flight is released: `loadTimeout` passed, or every waiter left by cancellation. */
  readonly signal: AbortSignal
  /**
   * Reports the version of what the loader read (a row version, an `updated_at` in ms...). The row
   * is stored with it; without it the row takes the highest version known when the load started.
   */
  setVersion(version: number): void
}

/** Loads one id from the origin. `undefined` means "absent" (cached as a negative row); `null` is a value. */
export type Loader<V> = (id: Id, context: LoaderContext) => V | undefined | PromiseLike<V | undefined>

/** How a flight ended, as data: a flight never rejects into the owner. */
export type FlightResult<V> =
  | {
      ok: true
      value: V | undefined
      source: 'loader' | 'l2'
      /** When the row expires (the same instant in L1 and L2); `undefined`: not to be cached. */
      expiresAt: number | undefined
      /** The version the answer carries. */
      version: number
      /** L2's version guard refused the write-back: L2 holds something newer, so L1 must not store it. */
      refused: boolean
    }
  | { ok: false; error: unknown }

/**
 * One in-flight load of one id. Created, joined, fenced, settled and released only by the owner;
 * the running load writes only `reported` (through its context) and reports its result as a message.
 */
export class Flight<V> {
  /** Callers with a signal or a deadline, in arrival order; answered ones stay, marked settled. Created on first join. */
  waiters: Waiter<V>[] | undefined = undefined
  /** Callers still waiting: those in `waiters` not yet answered, plus plain callers sharing {@link shared}. */
  waiting = 0
  private promise: Promise<V | undefined> | undefined = undefined
  private resolveShared: ((value: V | undefined) => void) | undefined = undefined
  private rejectShared: ((error: unknown) => void) | undefined = undefined
  /** `true` until the owner settles it (done, timed out or abandoned); later results are discarded. */
  running = true
  /** Set when a newer change of the id arrived mid-flight: its answer still goes to its waiters, but is not stored. */
  fenced = false
  /** The version the loader reported, if it did. */
  reported: number | undefined = undefined
  /** The stamp of the row the owner stored from this flight's answer (see `RowStore.set`); -1 when it stored none. */
  stored = -1
  /** Plain callers that joined through the table (written only by the table: it only grows). */
  joined = 0
  /** How many of `joined` the owner has counted (written only by the owner). */
  joinsCounted = 0
  private controller: AbortController | undefined = undefined

  constructor(
    /** The id it loads. */
    readonly id: Id,
    /** True when the flight is joinable through the flights map (the coalescing gate was on). */
    readonly registered: boolean,
    /** The highest version known for the id when the flight started. */
    readonly version: number,
  ) {}

  /** The loader's signal, created on first use so loaders that ignore it cost no AbortController. */
  get signal(): AbortSignal {
    this.controller ??= new AbortController()
    return this.controller.signal
  }

  /** Aborts the loader's signal (if the loader ever read it). */
  abort(reason: unknown): void {
    this.controller?.abort(reason)
  }

  /** Adds a waiter with a signal or a deadline (it may leave early). */
  join(waiter: Waiter<V>): void {
    waiter.flight = this
    ;(this.waiters ??= []).push(waiter)
    this.waiting++
  }

  /**
   * The one promise every plain caller (no signal, no deadline) of this flight holds: N plain
   * waiters cost one promise, not N. Created on first use, by whoever first needs it.
   */
  shared(): Promise<V | undefined> {
    this.promise ??= new Promise<V | undefined>((resolve, reject) => {
      this.resolveShared = resolve
      this.rejectShared = reject
    })
    return this.promise
  }

  /** Answers every caller still waiting with the flight's one outcome. */
  answer(result: { ok: true; value: V | undefined } | { ok: false; error: unknown }): void {
    const waiters = this.waiters ?? []
    if (result.ok) {
      this.resolveShared?.(result.value)
      for (const waiter of waiters) waiter.resolve(result.value)
    } else {
      this.rejectShared?.(result.error)
      for (const waiter of waiters) waiter.reject(result.error)
    }
    this.waiting = 0
  }

  /** True while the answer may still be written to L2 (not released, not fenced). */
  writable(): boolean {
    return this.running && !this.fenced
  }
}

/** The loader's view of a flight: its signal and the version report (both safe to destructure). */
class FlightContext implements LoaderContext {
  constructor(private readonly flight: Flight<unknown>) {}
  get signal(): AbortSignal {
    return this.flight.signal
  }
  /** A bound function, made only when a loader asks for it. */
  get setVersion(): (version: number) => void {
    const flight = this.flight
    return (version) => {
      if (!(Number.isSafeInteger(version) && version >= 0)) {
        throw new TypeError(`echostore: setVersion takes an integer ≥ 0, got ${String(version)}`)
      }
      flight.reported = version
    }
  }
}

/** What a flight needs from its table. */
export interface FlightDeps<V> {
  clock: Clock
  expiry: Expiry
  l2: L2Facade | undefined
  /** Called just before the loader runs (counts `loads`). */
  onLoad(id: Id): void
  /** Receives the flight's result (posts it to the owner). */
  report(flight: Flight<V>, result: FlightResult<V>): void
  /** Told when L2 refused a write-back that was not waited for (posts it to the owner). */
  refused(flight: Flight<V>): void
}

/**
 * Runs one load to its result: L2 first (an entry no older than the flight's version answers, with
 * its remaining lifetime), else the loader, whose answer is written back to L2 (version-guarded)
 * with the row's own expiry. Never rejects: a loader that throws synchronously, rejects or returns a
 * non-promise all become a {@link FlightResult}; every L2 failure is a miss.
 *
 * When L2 answered the read, the write-back is awaited, so another process that misses once this
 * flight has answered finds the value in L2. When L2 was down for the read (error, timeout, open
 * breaker), the write-back is not awaited, so a fetch costs at most one L2 timeout plus the loader;
 * a refusal then arrives later through `deps.refused`. The result goes to `deps.report`.
 */
export async function runFlight<V>(flight: Flight<V>, loader: Loader<V>, deps: FlightDeps<V>): Promise<void> {
  const { clock, expiry, l2 } = deps
  let result: FlightResult<V>
  try {
    let version = flight.version
    let l2Answered = false
    if (l2 !== undefined) {
      const entry = await l2.get(flight.id)
      l2Answered = entry !== L2_DOWN
      if (entry !== undefined && entry !== L2_DOWN && entry.version >= version) {
        if (entry.kind !== 'tombstone') {
          const value = entry.kind === 'value' ? (entry.value as V) : undefined
          deps.report(flight, { ok: true, value, source: 'l2', expiresAt: clock.now() + entry.ttl, version: entry.version, refused: false })
          return
        }
        version = entry.version
      }
    }
    deps.onLoad(flight.id)
    const value = await loader(flight.id, new FlightContext(flight as Flight<unknown>))
    result = { ok: true, value, source: 'loader', expiresAt: expiry.draw(value, clock.now()), version: flight.reported ?? version, refused: false }
    const written = writeBack(flight, result, deps)
    if (l2Answered) result.refused = (await written) === false
    else void written.then((outcome) => outcome === false && deps.refused(flight))
  } catch (error) {
    result = { ok: false, error }
  }
  deps.report(flight, result)
}

/** Writes a loader's answer to L2, version-guarded, with the row's own expiry: `false` refused, `true` written, `undefined` not written. */
function writeBack<V>(flight: Flight<V>, result: { value: V | undefined; version: number; expiresAt: number | undefined }, deps: FlightDeps<V>): Promise<boolean | undefined> {
  const { clock, l2 } = deps
  const { value, version, expiresAt } = result
  if (l2 === undefined || expiresAt === undefined || !flight.writable()) return Promise.resolve(undefined)
  const ttl = Math.max(1, Math.ceil(expiresAt - clock.now()))
  return l2.set(flight.id, { kind: value === undefined ? 'absent' : 'value', value, version, ttl })
}
