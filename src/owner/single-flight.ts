/**
 * The single flight: concurrent misses on one id coalesce onto a single in-flight load, and every
 * waiter of that flight receives its one answer (the same value object, or the same error).
 *
 * The counting law: every caller that misses counts one in `misses` (in the facade); here each such
 * caller either starts a flight (`flights`, one per flight) or joins one (`coalesced`). A caller
 * answered without a flight counts as joined too: it took the answer of a flight that just filled
 * the row, or, during the fail-safe's back-off, the answer of the flight whose failure was absorbed.
 * Every flight ends exactly once: answered (`fills` when stored; `fenced` when stale or refused;
 * neither when not cacheable or refused admission, counted `full_skips`), failed (`load_errors`),
 * or released when its last waiter left (`abandoned`); an L2 refusal arriving after a fill adds
 * `fenced`. A flight settles only what it
 * still owns: a result that arrives after the flight was released belongs to nobody and is dropped.
 *
 * Three kinds of caller reach {@link joinOrStart}, the one place that decides: plain callers (no
 * signal, no deadline: they share one promise per flight), waiters (a signal, a deadline or a soft
 * timeout of their own: see `waiter.ts`), and stale-while-revalidate refreshes (callers already
 * answered a graced value, who only make sure a flight runs).
 */
import { C } from '../core/counters.js'
import { FetchTimeoutError, LoadTimeoutError, abortReason, badArgument, reasonOf, showId } from '../core/errors.js'
import { emitSafely } from '../core/events.js'
import { type FetchTrace, runTraced, tracedJoin, tracedStart } from '../core/fetch-trace.js'
import { type Id, callerIdOf } from '../core/id.js'
import { NOT_LIVE } from '../rows/row-store.js'
import { type Fallback, Flight, FlightContext } from '../flight/flight.js'
import { absorbFailure, armSoftTimeout, backedOff, fallbackFor, pastExpiry, servedStale, softAnswer, softLeave } from './grace.js'
import { runFlight } from '../runner/run.js'
import type { Origin } from './loader.js'
import type { PlainMiss, Refresh } from './mailbox.js'
import { type WaitMessage, type WaiterLeaving, msg } from './messages.js'
import { fill, missedByL2 } from './row-writes.js'
import type { OwnerState, Turn } from './state.js'
import { Waiter } from '../flight/waiter.js'

/** Callers {@link joinOrStart} answered without a flight, with `value`. */
class AnsweredNow<V> {
  constructor(readonly value: V | undefined) {}
}

/** Where {@link joinOrStart} put a miss's callers: on a flight (one it started, or joined), or answered now. A miss that joins or starts a flight costs no object. */
type Placement<V> = Flight<V> | AnsweredNow<V>

/** How the callers of one miss came: their number, whether they force a refresh, whether they already hold an answer. A plain miss's message is its own. */
interface Callers<V> {
  readonly count: number
  /** A forced refresh: no live row nor graced value answers it, and a flight it starts takes no answer from L2. */
  readonly forced: boolean
  /** Stale-while-revalidate callers, already answered: they only need a flight to run (nothing soft, nothing stale counted again). */
  readonly answered?: boolean
  /** The joinable flight the mailbox saw for the id when the callers missed, if any. */
  readonly flight?: Flight<V> | undefined
  /** The callers' record for `echostore:fetch`, when they are one traced fetch. */
  readonly trace?: FetchTrace | undefined
  /** The rows' proof that the id had no row when the callers missed (see `RowStore.absence`), if any. */
  readonly absence?: number
  /** A caller with a soft timeout of its own: it replaces the table's for it. */
  readonly ownSoftTimeout?: boolean
}

/**
 * Join-or-start, for every kind of miss: the callers join the id's flight (the one the mailbox saw,
 * unless it was released earlier in this batch without an answer, or the id's joinable flight now);
 * else they are answered without a flight (see {@link answerWithoutFlight}); else they start a flight
 * with `loader`. A joined flight past its soft timeout answers them its graced value at once.
 * Counts them by the law above.
 */
function joinOrStart<V>(turn: Turn<V>, id: Id, loader: Origin<V>, callers: Callers<V>): Placement<V> {
  const { state } = turn
  const { count, forced, answered, flight: seen, trace, absence = -1, ownSoftTimeout } = callers
  state.rows.countRequests(id, count)
  // The flight the mailbox saw may have been released earlier in this batch without an answer (its
  // last waiter left by cancellation): it has nothing to give, so the callers look afresh.
  const live = seen !== undefined && (seen.running || seen.answered !== undefined) ? seen : undefined
  let flight = live ?? (state.coalesce ? state.flights.joinable(id) : undefined)
  // A forced refresh joins no unforced flight (which may answer from L2 or the row's era): it
  // supersedes it, below, as it starts.
  if (forced && flight !== undefined && !flight.forced) flight = undefined
  if (flight !== undefined) {
    state.counters[C.coalesced] += count
    tracedJoin(flight, trace, count)
    // A forced refresh's callers are answered by its loader, never by a graced value; a caller with
    // a soft timeout of its own waits for that one, not the table's.
    const soft = answered || forced || ownSoftTimeout === true ? undefined : softAnswer(turn, flight)
    if (soft === undefined) return flight
    // Its soft timeout passed: joiners get the graced value at once, while it lasts.
    if (pastExpiry(turn, soft.expiresAt)) {
      servedStale(turn, id, count, soft.expiresAt, 'soft')
      if (trace !== undefined) trace.stale = true
    }
    return new AnsweredNow(soft.value)
  }
  const slot = state.rows.findAbsent(id, absence)
  const without = forced ? undefined : answerWithoutFlight(turn, slot)
  if (without !== undefined) {
    state.counters[C.coalesced] += count
    if (without.staleSince !== undefined && !answered) servedStale(turn, id, count, without.staleSince, 'backoff')
    if (without.staleSince !== undefined && trace !== undefined) trace.stale = true
    return new AnsweredNow(without.value)
  }
  state.counters[C.coalesced] += count - 1
  // A forced refresh supersedes every flight of its id in progress as it starts (the registry's
  // `start`), the solo ones too (coalescing off): their answers still go to their callers, but none
  // is stored over its own.
  const started = startFlight(turn, id, loader, slot, forced)
  if (trace !== undefined) tracedStart(started, trace, count)
  return started
}

/**
 * The answer a miss gets without a flight, if any: the live row a flight filled since the miss was
 * made (coalescing on), or, during the fail-safe's back-off, the graced value (`staleSince`: when
 * it expired).
 */
function answerWithoutFlight<V>(turn: Turn<V>, slot: number): { value: V | undefined; staleSince: number | undefined } | undefined {
  const { state, env } = turn
  if (slot < 0) return undefined // no row: neither a live value nor a graced one
  if (state.coalesce) {
    const value = state.rows.liveAt(slot, env.clock.now())
    if (value !== NOT_LIVE) return { value, staleSince: undefined }
  }
  const graced = backedOff(turn, slot)
  return graced === undefined ? undefined : { value: graced.value, staleSince: graced.expiresAt }
}

/**
 * Plain callers of one id: they share one promise (the flight's, or theirs, lent to the flight they
 * start or join first); a forced refresh's callers share the flight's forced promise instead.
 */
export function onPlainMiss<V>(turn: Turn<V>, miss: PlainMiss<V>): void {
  if (miss.tagStale) turn.state.counters[C.tag_stale] += miss.count
  const flight = joinOrStart(turn, miss.id, miss.loader, miss)
  if (flight instanceof AnsweredNow) return miss.resolve?.(flight.value) // without `resolve`, they hold a shared promise already answered
  const { forced } = miss
  if (flight.running) {
    flight.waiting += miss.count
    if (forced) flight.forcedWaiting += miss.count
  } else if (flight.answeredStaleSince !== undefined && !forced) {
    // Joined in the batch its failure was absorbed: these callers get the fail-safe's graced value too.
    servedStale(turn, miss.id, miss.count, flight.answeredStaleSince, 'failsafe')
  }
  if (miss.resolve === undefined) return // they hold the flight's shared promise
  const shared = forced ? flight.forcedShared : flight.shared
  const answered = forced ? flight.forcedAnswered : flight.answered
  if (shared === undefined && flight.running) {
    if (forced) flight.forcedShared = miss
    else flight.shared = miss
  } else if (shared !== undefined) miss.resolve(shared.promise)
  else if (answered?.ok === true) miss.resolve(answered.value)
  else if (answered !== undefined) miss.reject!(answered.error)
}

/** Callers already answered a graced value (stale-while-revalidate): the id's one refresh flight is joined, or started with nobody waiting on it. */
export function onRefresh<V>(turn: Turn<V>, refresh: Refresh<V>): void {
  servedStale(turn, refresh.id, refresh.count, turn.env.clock.now() - refresh.staleness, 'swr')
  const placed = joinOrStart(turn, refresh.id, refresh.loader, { count: refresh.count, forced: false, answered: true })
  if (placed instanceof Flight) placed.promised = true // N stale readers, one refresh: it fills the row
}

/** A caller with a signal, a deadline or a soft timeout: it joins or starts a flight like any miss, and may leave early. */
export function onWait<V>(turn: Turn<V>, wait: WaitMessage<V>): void {
  const { env } = turn
  const waiter = new Waiter<V>(wait.signal, wait.timeout, wait.softTimeout, wait.resolve, wait.reject, env.clock)
  waiter.trace = wait.trace
  waiter.forced = wait.forced
  const placed = joinOrStart(turn, wait.id, wait.loader, { count: 1, forced: wait.forced, answered: false, trace: wait.trace, ownSoftTimeout: wait.softTimeout !== undefined })
  if (placed instanceof AnsweredNow) {
    waiter.resolve(placed.value)
    return
  }
  placed.join(waiter)
  // The signal may have aborted between the fetch and this turn: the waiter leaves at once.
  if (wait.signal?.aborted === true) return onWaiterLeft(turn, waiter, 'cancel')
  const send = env.send
  turn.defer(() => {
    try {
      waiter.listen((reason) => send(msg.waiterLeft(waiter, reason)))
    } catch (error) {
      send(msg.waiterLeft(waiter, { refused: error }))
    }
  })
}

/**
 * A waiter leaves: its deadline passed, or its signal aborted; a flight left empty by cancellation
 * is released. Its soft timeout passing answers it from the graced value, when there is one, and
 * the flight goes on.
 */
export function onWaiterLeft<V>(turn: Turn<V>, waiter: Waiter<V>, leaving: WaiterLeaving): void {
  const { state, env } = turn
  const flight = waiter.flight
  if (leaving === 'soft') return softLeave(turn, waiter)
  const reason = leaving === 'timeout' ? 'timeout' : 'cancel'
  // A caller's own deadline and signal are the caller's: they name its id (in a namespace, not the key).
  const error =
    leaving === 'timeout'
      ? new FetchTimeoutError(env.name, callerIdOf(flight!.id), waiter.timeout!)
      : leaving === 'cancel'
        ? abortReason(waiter.signal!)
        : badArgument(
            TypeError,
            `the read of ${showId(callerIdOf(flight!.id))}: its option "signal" could not be listened to (${reasonOf(leaving.refused)}); pass an AbortSignal (AbortController's, or AbortSignal.timeout(ms))`,
            { cause: leaving.refused },
          )
  if (!waiter.reject(error)) return
  state.counters[reason === 'timeout' ? C.timeouts : C.cancelled]++
  if (flight === undefined || !flight.running) return
  flight.waiting--
  if (waiter.forced) flight.forcedWaiting--
  // A flight a caller left by its timeout goes on and fills (so does one a caller was answered early
  // by); one whose every caller left by cancellation is released.
  if (reason === 'timeout') flight.promised = true
  else if (flight.waiting === 0 && !flight.promised) {
    release(turn, flight)
    state.counters[C.abandoned]++
    flight.context.abort(error)
    // A forced refresh nobody waits for any more undoes nothing it superseded.
    if (flight.forced) state.flights.restoreSuperseded(flight)
  }
}

/**
 * Starts a flight for `id`, whose row is at `slot` (-1: no row): registered (joinable while the
 * gate is on), counted, bounded by `env.flightBound` (and by the soft timeout, when there is a graced
 * value). A `forced` one (a forced refresh) takes no answer from L2. Its runner starts once the transition commits.
 */
function startFlight<V>(turn: Turn<V>, id: Id, loader: Origin<V>, slot: number, forced: boolean): Flight<V> {
  const { state, env } = turn
  const now = env.clock.now()
  const known = Math.max(state.rows.versionAt(slot), missedByL2(state, id), 0)
  const flight = new Flight<V>(id, state.coalesce, known, slot, state.soloFills, now + env.flightBound, forced, state.versions.tick(now), new FlightContext(), loader)
  state.flights.start(flight)
  state.counters[C.flights]++
  turn.started.push(flight)
  if (env.softTimeout !== undefined) armSoftTimeout(turn, flight)
  return flight
}

/**
 * Starts the runners of the flights a transition started (one effect per transition): a flight with
 * a loader runs alone; a flight with a batch loader goes to the batch window, which calls each batch
 * loader once for the flights started with it until the tick's promise jobs have run (see `batch-window.ts`).
 */
export function runStarted<V>(turn: Turn<V>): void {
  const started = turn.started.splice(0)
  const { runner: deps, batchWindow } = turn.env
  turn.defer(() => {
    for (const flight of started) {
      const origin = flight.origin
      if (typeof origin !== 'function') batchWindow.add(flight, origin)
      else if (flight.trace === undefined) runFlight(flight, origin, deps)
      else runTraced(flight, () => runFlight(flight, origin, deps))
    }
  })
}

/** Ends a flight early (before its deadline): see `Flights.release`. */
function release<V>(turn: Turn<V>, flight: Flight<V>): void {
  turn.state.flights.release(flight, turn.defer)
}

/** A flight's result: stored unless it was fenced or refused, then its one answer goes to every waiter. */
export function onFlightDone<V>(turn: Turn<V>, flight: Flight<V>): void {
  const { state, env } = turn
  const result = flight.result!
  if (!state.flights.owns(flight)) return // timed out or abandoned: this result belongs to nobody
  release(turn, flight)
  if (result.ok) {
    if (result.source === 'l2') state.counters[C.l2_hits]++
    if (result.leaseWaited === true) state.counters[C.lease_waited]++
    const fenced = flight.fenced || result.refused
    const slot = fenced ? -1 : rowSlot(state, flight)
    // An answer older than one of its tags (invalidated while it loaded) is fenced too.
    const tags = result.tags
    const stale = fenced || state.rows.versionAt(slot) > result.version || (tags !== undefined && state.tags.stale(tags.keys, tags.born))
    if (stale) state.counters[C.fenced]++
    else flight.stored = fill(turn, flight, result.value, result.expiresAt, result.version, slot, tags)
    const stored = flight.stored >= 0
    if (stored) state.counters[C.fills]++
    if (turn.listening) turn.defer(() => emitSafely(env.events, 'fill', { table: env.name, id: flight.id, source: result.source, stored }))
    flight.answer(result)
  } else {
    state.counters[C.load_errors]++
    failed(turn, flight, result.error, result.fallback)
  }
}

/** The slot of `flight`'s id's row now (-1: none): the one it started with when that still holds (see `Flight.slot`), else looked up. */
function rowSlot<V>(state: OwnerState<V>, flight: Flight<V>): number {
  const { slot } = flight
  if (!flight.joinable || flight.soloFills !== state.soloFills || (slot >= 0 && !state.rows.holdsAt(slot, flight.id))) return state.rows.find(flight.id)
  return slot
}

/** Every flight whose bound (`loadTimeout`, with a lease's wait) has passed: released, its loader aborted, its waiters answered with `LoadTimeoutError`. */
export function onDeadline<V>(turn: Turn<V>): void {
  const { state, env } = turn
  for (const flight of state.flights.expire(turn.defer)) {
    state.counters[C.load_errors]++
    const error = new LoadTimeoutError(env.name, flight.id, env.loadTimeout, env.flightBound)
    flight.context.abort(error)
    failed(turn, flight, error, undefined)
  }
}

/**
 * A released flight failed with `error`: the fail-safe answers its waiters with a graced value when
 * there is one (a forced refresh's callers still get `error`), and holds the origin off for the id;
 * else they get `error`.
 */
function failed<V>(turn: Turn<V>, flight: Flight<V>, error: unknown, fromL2: Fallback<V> | undefined): void {
  const fallback = fallbackFor(turn, flight, fromL2)
  if (fallback !== undefined) return absorbFailure(turn, flight, error, fallback)
  const { env } = turn
  if (turn.listening) turn.defer(() => emitSafely(env.events, 'error', { table: env.name, id: flight.id, error }))
  flight.answer({ ok: false, error })
}

/** L2 holds something newer than what the flight stored: drop the row, if it is still that row. */
export function onL2Refused<V>(turn: Turn<V>, flight: Flight<V>): void {
  const { rows, counters } = turn.state
  if (flight.stored < 0 || !rows.holds(flight.id, flight.stored)) return
  rows.delete(flight.id)
  flight.stored = -1
  counters[C.fenced]++
}
