/**
 * The owner's handling of misses: concurrent misses on one id coalesce onto a single in-flight
 * load, and every waiter of that flight receives its one answer (the same value object, or the same
 * error). Each miss counts once: it either starts a flight (`flights`) or joins one (`coalesced`);
 * a miss answered without a flight counts as joined too: it took the answer of a flight that just
 * filled the row, or, during the fail-safe's back-off, the answer of the flight whose failure was
 * absorbed.
 */
import { C } from '../core/counters.js'
import { FetchTimeoutError } from '../core/errors.js'
import { NOT_LIVE } from '../rows/row-store.js'
import type { Flight } from './flight.js'
import { release, startFlight } from './on-flight.js'
import { backedOff, fallbackFor, servedStale, softAnswer } from './grace.js'
import { type PlainMiss, type Refresh, type WaitMessage, msg } from './messages.js'
import type { Turn } from './state.js'
import { Waiter } from './waiter.js'

/** An answer without a flight: the value, and when it expired if it is a graced one. */
type Answer<V> = { value: V | undefined; staleSince: number | undefined }

/**
 * Plain callers of one id: they join the flight the mailbox saw (holding its shared promise, or
 * lending it theirs), or the id's flight now, or are answered without a flight (see
 * {@link answerWithoutFlight}), or start a flight.
 */
export function onPlainMiss<V>(turn: Turn<V>, miss: PlainMiss<V>): void {
  const { state } = turn
  state.rows.touch(miss.id, miss.count)
  // The flight the mailbox saw may have been released earlier in this batch without an answer (its
  // last waiter left by cancellation): it has nothing to give, so the callers look afresh.
  const seen = miss.flight !== undefined && (miss.flight.running || miss.flight.answered !== undefined) ? miss.flight : undefined
  const flight = seen ?? (state.coalesce ? state.flights.get(miss.id) : undefined)
  if (flight !== undefined) return joinPlain(turn, miss, flight)
  const slot = state.rows.find(miss.id)
  const answer = answerWithoutFlight(turn, slot, miss.forced)
  if (answer !== undefined) {
    counted(turn, miss.id, miss.count, answer)
    miss.resolve!(answer.value)
    return
  }
  const started = startFlight(turn, miss.id, miss.loader, state.rows.versionAt(slot), miss.forced)
  state.counters[C.coalesced] += miss.count - 1
  started.waiting += miss.count
  started.shared = miss
}

/** Plain callers joining a running (or just answered) flight. */
function joinPlain<V>(turn: Turn<V>, miss: PlainMiss<V>, flight: Flight<V>): void {
  turn.state.counters[C.coalesced] += miss.count
  const soft = softAnswer(turn, flight)
  if (soft !== undefined) {
    // Its soft timeout passed: joiners get the graced value at once, while it lasts.
    servedStale(turn, miss.id, miss.count, soft.expiresAt, 'soft')
    miss.resolve?.(soft.value)
    return
  }
  if (flight.running) flight.waiting += miss.count
  if (miss.resolve === undefined) return // they hold the flight's shared promise
  if (flight.shared === undefined && flight.running) flight.shared = miss
  else if (flight.shared !== undefined) miss.resolve(flight.shared.promise)
  else if (flight.answered?.ok === true) miss.resolve(flight.answered.value)
  else if (flight.answered !== undefined) miss.reject!(flight.answered.error)
}

/**
 * The answer a miss gets without a flight, if any: the live row a flight filled since the miss was
 * made (coalescing on), or, during the fail-safe's back-off, the graced value. A forced refresh
 * takes neither.
 */
function answerWithoutFlight<V>(turn: Turn<V>, slot: number, forced: boolean): Answer<V> | undefined {
  if (forced) return undefined
  const { state, env } = turn
  if (state.coalesce) {
    const value = state.rows.liveAt(slot, env.clock.now())
    if (value !== NOT_LIVE) return { value, staleSince: undefined }
  }
  const graced = backedOff(turn, slot)
  return graced === undefined ? undefined : { value: graced.value, staleSince: graced.expiresAt }
}

/** Counts `callers` answered without a flight: joined, and stale when the answer was a graced value. */
function counted<V>(turn: Turn<V>, id: PlainMiss<V>['id'], callers: number, answer: Answer<V>): void {
  turn.state.counters[C.coalesced] += callers
  if (answer.staleSince !== undefined) servedStale(turn, id, callers, answer.staleSince, 'backoff')
}

/** Callers already answered a graced value (stale-while-revalidate): the id's one refresh flight is joined, or started with nobody waiting on it. */
export function onRefresh<V>(turn: Turn<V>, refresh: Refresh<V>): void {
  const { state, env } = turn
  state.rows.touch(refresh.id, refresh.count)
  servedStale(turn, refresh.id, refresh.count, env.clock.now() - refresh.staleness, 'swr')
  const flight = state.coalesce ? state.flights.get(refresh.id) : undefined
  const slot = state.rows.find(refresh.id)
  if (flight !== undefined || answerWithoutFlight(turn, slot, false) !== undefined) {
    state.counters[C.coalesced] += refresh.count
    return
  }
  startFlight(turn, refresh.id, refresh.loader, state.rows.versionAt(slot))
  state.counters[C.coalesced] += refresh.count - 1
}

/** A caller with a signal, a deadline or a soft timeout: it joins or starts a flight like any miss, and may leave early. */
export function onWait<V>(turn: Turn<V>, wait: WaitMessage<V>): void {
  const { state, env } = turn
  state.rows.touch(wait.id, 1)
  const waiter = new Waiter<V>(wait.signal, wait.timeout, wait.softTimeout, wait.resolve, wait.reject, env.clock)
  const flight = state.coalesce ? state.flights.get(wait.id) : undefined
  if (flight !== undefined) {
    state.counters[C.coalesced]++
    const soft = softAnswer(turn, flight)
    if (soft !== undefined) {
      servedStale(turn, wait.id, 1, soft.expiresAt, 'soft')
      waiter.resolve(soft.value)
      return
    }
    flight.join(waiter)
  } else {
    const slot = state.rows.find(wait.id)
    const answer = answerWithoutFlight(turn, slot, wait.forced)
    if (answer !== undefined) {
      counted(turn, wait.id, 1, answer)
      waiter.resolve(answer.value)
      return
    }
    startFlight(turn, wait.id, wait.loader, state.rows.versionAt(slot), wait.forced).join(waiter)
  }
  // The signal may have aborted between the fetch and this turn: the waiter leaves at once.
  if (wait.signal?.aborted === true) return onWaiterLeft(turn, waiter, 'cancel')
  const send = env.send
  turn.defer(() => waiter.listen((reason) => send(msg.waiterLeft(waiter, reason))))
}

/**
 * A waiter leaves: its deadline passed, or its signal aborted; a flight left empty by cancellation
 * is released. Its soft timeout passing answers it from the graced value, when there is one, and
 * the flight goes on.
 */
export function onWaiterLeft<V>(turn: Turn<V>, waiter: Waiter<V>, reason: 'timeout' | 'cancel' | 'soft'): void {
  const { state, env } = turn
  const flight = waiter.flight
  if (reason === 'soft') return softLeave(turn, waiter)
  const error = reason === 'timeout' ? new FetchTimeoutError(env.name, flight!.id, waiter.timeout!) : abortReason(waiter.signal!)
  if (!waiter.reject(error)) return
  state.counters[reason === 'timeout' ? C.timeouts : C.cancelled]++
  if (flight === undefined || !flight.running) return
  flight.waiting--
  // A flight whose waiters all timed out goes on and fills; one left empty by cancellation is released.
  if (flight.waiting === 0 && reason === 'cancel') {
    release(turn, flight)
    state.counters[C.abandoned]++
    flight.context.abort(error)
  }
}

/** A waiter's soft timeout passed: it takes the graced value, if there is one, and leaves the flight, which goes on. */
function softLeave<V>(turn: Turn<V>, waiter: Waiter<V>): void {
  const flight = waiter.flight
  if (flight === undefined || !flight.running || waiter.settled) return
  const fallback = fallbackFor(turn, flight)
  if (fallback === undefined) return
  servedStale(turn, flight.id, 1, fallback.expiresAt, 'soft')
  waiter.resolve(fallback.value)
  flight.waiting--
}

/** A signal's reason; what its getter threw, when it throws (a hostile subclass): the waiter is answered either way. */
function abortReason(signal: AbortSignal): unknown {
  try {
    return signal.reason
  } catch (error) {
    return error
  }
}
