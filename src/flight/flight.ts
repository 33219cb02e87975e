/**
 * One in-flight load of one id: the single flight that concurrent misses on the id coalesce onto.
 * Only one flight per id is joinable at a time; a caller that misses while it runs joins it and
 * receives its one answer (the same value object, or the same error) instead of loading again.
 */
import { badNumber, describe, showId } from '../core/errors.js'
import { MAX_TTL } from '../table/options.js'
import type { TimerHandle } from '../core/clock.js'
import type { FlightTrace } from '../core/fetch-trace.js'
import { type Id, callerIdOf } from '../core/id.js'
import { MAX_VERSION, isVersion } from '../core/versions.js'
import { keepShape } from '../core/kept-shapes.js'
import type { RowTags } from '../tags/scope.js'
import { checkTags } from '../tags/scope.js'
import type { LoaderContext } from '../core/loader.js'
import type { Origin } from '../owner/loader.js'
import type { Waiter } from './waiter.js'

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
      /** An L2 answer that was another process's lease fill, waited for (`lease_waited`). */
      leaseWaited?: true
      /** The tag keys the answer carries and its birth, when it has tags (see `tags/scope.ts`). */
      tags?: RowTags | undefined
    }
  | {
      ok: false
      error: unknown
      /** A graced value the flight found in L2 on its way, which the fail-safe may answer with. */
      fallback: Fallback<V> | undefined
    }

/** A graced value: past its expiry, within its grace, kept as a fallback for a failing origin. */
export interface Fallback<V> {
  value: V | undefined
  /** When it expired (or expires), on the table's clock. */
  expiresAt: number
  version: number
  /** The tag keys (and namespace marks) of an L2 entry's value and its birth, when it has any: the row the fail-safe stores from it keeps them (see `absorbFailure`). */
  tags?: RowTags | undefined
}

/** How the holder of a lease this process waits on ended without a fill (an `unfilled` message): its `lease` token, and whether its loader `failed`. */
export interface HolderEnd {
  readonly lease: string
  readonly failed: boolean
}

/** One promise shared by a flight's plain callers (no signal, no deadline), with what settles it. */
export interface SharedCallers<V> {
  readonly promise: Promise<V | undefined>
  /** Settles `promise`; `undefined` when the callers hold another flight's promise. */
  readonly resolve: ((value: V | undefined | Promise<V | undefined>) => void) | undefined
  readonly reject: ((error: unknown) => void) | undefined
}

/** The one answer every caller of a flight gets. */
export type Answer<V> = { ok: true; value: V | undefined } | { ok: false; error: unknown }

/**
 * A flight's record. Created, joined, fenced, answered and released only by the owner (through its
 * registry, `owner/flights.ts`); its runner (`runner/run.ts`) only reads it, but for `leaseWake` and
 * `result`, and reports what happened through its port (`runner/port.ts`). The flight is also the
 * message that brings its result to the owner (`type`, `result`): a load costs no message object.
 */
export class Flight<V> {
  /** Its role as the owner's message: the flight is done, with {@link result}. */
  readonly type = 'flight.done'
  /** How it ended: set by its runner (through its port) just before the flight is posted to the owner as its own message; read by the owner. */
  result: FlightResult<V> | undefined = undefined
  /** The unforced plain callers' shared promise (a miss message's own). Set by the owner when the first one joins. */
  shared: SharedCallers<V> | undefined = undefined
  /**
   * The forced plain callers' shared promise (a forced refresh's miss message's own), apart from
   * {@link shared}: the fail-safe and the soft timeouts answer the unforced callers a graced value,
   * never the forced ones. Set by the owner when the first one joins a forced flight.
   */
  forcedShared: SharedCallers<V> | undefined = undefined
  /** Callers with a signal or a deadline, in arrival order; answered ones stay, marked settled, until a soft-timeout answer drops them (it keeps the forced ones). Created on first join. */
  waiters: Waiter<V>[] | undefined = undefined
  /** Callers still waiting: plain callers, plus waiters not yet answered. */
  waiting = 0
  /** Of {@link waiting}, the forced refresh's callers (plain ones and waiters): a graced value answers only the others. */
  forcedWaiting = 0
  /** `true` until the owner settles it (done, timed out or abandoned); later results are discarded. */
  running = true
  /**
   * Set once a caller was told the flight goes on: answered early (a soft timeout, or
   * stale-while-revalidate), or left by its own timeout. Such a flight fills the row it was promised
   * to, and is not released when its last waiter then leaves by cancellation. Written by the owner.
   */
  promised = false
  /** Set when a newer change of the id arrived mid-flight, or a forced refresh superseded it: its answer still goes to its waiters, but is not stored. Written by the registry. */
  fenced = false
  /**
   * The forced refresh that superseded it, set with {@link fenced}: no change made what it had
   * stale, so its unforced callers keep their graced fallback; a later fence of a change (an id's, a
   * scope's, a clear's) clears it, and so does that refresh's abandonment (see
   * `Flights.restoreSuperseded`). Written by the registry.
   */
  supersededBy: Flight<V> | undefined = undefined

  /** True while a forced refresh has superseded it (see {@link supersededBy}). */
  get superseded(): boolean {
    return this.supersededBy !== undefined
  }
  /** The stamp of the row the owner stored from this flight's answer (see `RowStore.write`); -1 when it stored none. */
  stored = -1
  /** The answer, once given: an unforced plain caller whose join arrives later reads it. */
  answered: Answer<V> | undefined = undefined
  /** The answer its forced callers got, once given: {@link answered}, unless the fail-safe answered the others a graced value. */
  forcedAnswered: Answer<V> | undefined = undefined
  /** When the graced value the fail-safe answered with expired, if it did: an unforced plain caller whose join arrives later got a stale answer. */
  answeredStaleSince: number | undefined = undefined
  /** The graced value its callers were answered because its soft timeout passed (it expired at `expiresAt`): later unforced joiners get it too. */
  softened: { value: V | undefined; expiresAt: number } | undefined = undefined
  /** A graced value its runner found in L2 (reported by an `l2.graced` message): the soft timeouts and the fail-safe may answer it. Written by the owner. */
  l2Fallback: Fallback<V> | undefined = undefined
  /** The soft timeout's timer, while armed. */
  softTimer: TimerHandle | undefined = undefined
  /**
   * Set by the flight's runner while it waits on another process's lease (see `lease.ts`); called
   * by the owner, after its turn, when a fill or a change of the id arrives (the runner looks at L2 at
   * once), or when the holder says it ended without a fill (with how it ended).
   */
  leaseWake: ((ended?: HolderEnd) => void) | undefined = undefined
  /**
   * Set by the flight's runner while its loader runs holding the id's lease (see `run.ts`): the
   * owner calls it, after its turn, when a change fences the flight. Its answer will fill nothing,
   * so the lease is given back at once and the processes waiting on it load.
   */
  leaseHeld: (() => void) | undefined = undefined
  /** Its record for `echostore:fetch`, when a traced fetch started it (see `core/fetch-trace.ts`). Set and written by the owner. */
  trace: FlightTrace | undefined = undefined

  constructor(
    /** The id it loads. */
    readonly id: Id,
    /** True when misses join it through the flights map (the coalescing gate was on when it started). */
    readonly joinable: boolean,
    /** The highest version known for the id when the flight started. */
    readonly version: number,
    /**
     * The slot of its id's row when it started (-1: none), so its fill need not look the id up again.
     * While a joinable flight runs unfenced, no other flight of its id is joinable, and every change
     * that writes its id's row fences it first: only a solo flight's write (`soloFills` moved) can
     * have put a row where it found none. A slot it found may have been freed meanwhile (by the
     * sweeper, an eviction or an L2 refusal), and is trusted only while it still holds the id.
     */
    readonly slot: number,
    /** The owner's `soloFills` when it started. */
    readonly soloFills: number,
    /** When its bound passes, on the table's clock: `loadTimeout`, plus, with a lease, its `wait` and five L2 timeouts (`LEASE_L2_CALLS`). */
    readonly deadline: number,
    /** A forced refresh: L2 does not answer it; it reads L2 for the version of the entry it replaces (and a graced value for its unforced joiners), and its answer replaces the row whatever L2 holds. */
    readonly forced: boolean,
    /** Its birth on the tag version clock (see `tags/tag-versions.ts`): an answer with a tag invalidated since is not stored. */
    readonly born: number,
    /** The loader's view of this flight (its signal, its reports). */
    readonly context: FlightContext,
    /** What it loads with: the loader of the caller that started it, or a batch loader (the runner calls it). */
    readonly origin: Origin<V>,
  ) {}

  /** True when a change fenced it (a forced refresh's supersession alone does not): nothing it holds or finds answers as fresh or graced. */
  get fencedByChange(): boolean {
    return this.fenced && !this.superseded
  }

  /** Adds a waiter with a signal or a deadline (it may leave early). */
  join(waiter: Waiter<V>): void {
    waiter.flight = this
    ;(this.waiters ??= []).push(waiter)
    this.waiting++
    if (waiter.forced) this.forcedWaiting++
  }

  /**
   * Answers with `value` every caller waiting now that takes the table's soft timeout (its soft
   * timeout passed) while the flight goes on: the unforced plain callers, and the waiters that
   * {@link Waiter.takesTableSoftTimeout}; later callers get promises of their own. A forced
   * refresh's callers, and waiters with a soft timeout of their own, wait on. Returns how many it answered.
   */
  answerEarly(value: V | undefined): number {
    const before = this.waiting
    // The shared promise a flight holds is always one its callers' miss lent it, with its own resolve.
    if (this.shared !== undefined) this.shared.resolve!(value)
    this.shared = undefined
    let kept: Waiter<V>[] | undefined
    let keptForced = 0
    for (const waiter of this.waiters ?? []) {
      if (waiter.takesTableSoftTimeout) waiter.resolve(value)
      else if (!waiter.settled) {
        ;(kept ??= []).push(waiter)
        if (waiter.forced) keptForced++
      }
    }
    this.waiters = kept
    // Still waiting: the forced plain callers (every forced waiter still waiting is kept), and the kept waiters.
    this.waiting = this.forcedWaiting - keptForced + (kept?.length ?? 0)
    const answered = before - this.waiting
    if (answered > 0) this.promised = true // told it goes on (nobody answered: nobody was)
    return answered
  }

  /**
   * Answers every caller still waiting with the flight's one outcome; a forced refresh's callers with
   * `forced` when it differs (the fail-safe answers the others a graced value, them the error).
   */
  answer(answer: Answer<V>, forced: Answer<V> = answer): void {
    this.answered = answer
    this.forcedAnswered = forced
    // The unforced callers' promise settles here, not through `settle`: every cold miss runs this.
    const shared = this.shared
    if (shared !== undefined) {
      if (answer.ok) shared.resolve!(answer.value)
      else shared.reject!(answer.error)
    }
    if (this.forcedShared !== undefined) settle(this.forcedShared, forced)
    for (const waiter of this.waiters ?? []) {
      const its = waiter.forced ? forced : answer
      if (its.ok) waiter.resolve(its.value)
      else waiter.reject(its.error)
    }
    this.waiting = 0
    this.forcedWaiting = 0
  }
}

/** Settles a shared promise a miss lent its flight (it always has its own resolve) with `answer`. */
function settle<V>(callers: SharedCallers<V>, answer: Answer<V>): void {
  if (answer.ok) callers.resolve!(answer.value)
  else callers.reject!(answer.error)
}

/**
 * The loader's view of a flight: its signal and its reports (both safe to destructure). Written by
 * the loader (through `setVersion`, `setTtl` and `setTags`) and by the owner (`abort`); read by the flight's runner.
 */
export class FlightContext implements LoaderContext {
  /** The version the loader reported, if it did. */
  reported: number | undefined = undefined
  /** The lifetime the loader chose for its answer, if it did. */
  lifetime: number | undefined = undefined
  /** The tags the loader gave its answer, if it did. */
  tags: readonly string[] | undefined = undefined
  #controller: AbortController | undefined = undefined
  /** Set once the flight is released: a signal first read afterwards is made already aborted with it. */
  #abortedWith: { reason: unknown } | undefined = undefined

  /** Aborts when the flight is released: `loadTimeout` passed, or every waiter left by cancellation. Created on first use (aborted already, when first read after the release). */
  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController()
      if (this.#abortedWith !== undefined) this.#controller.abort(this.#abortedWith.reason)
    }
    return this.#controller.signal
  }

  /** A bound function, made only when a loader asks for it. */
  get setVersion(): (version: number) => void {
    return (version) => {
      this.reported = checkReportedVersion(version)
    }
  }

  /** A bound function, made only when a loader asks for it. */
  get setTtl(): (ms: number) => void {
    return (ms) => {
      this.lifetime = checkLifetime(ms)
    }
  }

  /** A bound function, made only when a loader asks for it. */
  get setTags(): (tags: readonly string[]) => void {
    return (tags) => {
      this.tags = checkTags(tags, 'setTags')
    }
  }

  /** Aborts the loader's signal: now if the loader read it, else as it first reads it. */
  abort(reason: unknown): void {
    this.#abortedWith ??= { reason }
    this.#controller?.abort(reason)
  }
}

// Every miss path reads flights and their contexts: their maps must outlive the flights (see
// `kept-shapes.ts`). The deadline and birth are clock readings, non-integers as real ones are.
keepShape(new Flight<unknown>('', true, 0, -1, 0, 0.5, false, 0.5, new FlightContext(), () => undefined))

/**
 * `version` when it is a version a loader may report (`setVersion`: an integer in [0, `MAX_VERSION`]);
 * else throws a TypeError (not a number) or RangeError (a number out of range) saying so, naming
 * `id` for a batch loader's `setVersion(id, n)`.
 */
export function checkReportedVersion(version: number, id?: Id): number {
  if (!isVersion(version)) {
    const of = id === undefined ? '' : ` for id ${showId(callerIdOf(id))}`
    throw badNumber(version, `setVersion takes an integer in [0, ${MAX_VERSION}]${of} (a row version, or a time in ms such as updated_at), got ${describe(version)}`)
  }
  return version
}

/** `ms` when it is a lifetime a loader may choose for its answer (`setTtl`: ms in [0, a year]); else throws a TypeError/RangeError saying so. */
export function checkLifetime(ms: number, id?: Id): number {
  if (!(typeof ms === 'number' && ms >= 0 && ms <= MAX_TTL)) {
    throw badNumber(ms, `setTtl takes a number of ms in [0, ${MAX_TTL}]${id === undefined ? '' : ` for id ${showId(callerIdOf(id))}`} (0: answer and store nothing), got ${describe(ms)}`)
  }
  return ms
}
