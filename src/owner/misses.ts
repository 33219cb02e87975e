/**
 * The owner's handling of misses: concurrent misses on one id coalesce onto a single in-flight
 * load, and every waiter of that flight receives its one answer (the same value object, or the same
 * error). Each miss counts once: it either starts a flight (`flights`) or joins one (`coalesced`);
 * a miss that arrives after a flight for the id already filled the row got that flight's answer,
 * and counts as joined.
 */
import { C } from '../counters.js'
import { FetchTimeoutError } from '../errors.js'
import { NOT_LIVE } from '../rows/row-store.js'
import type { Flight } from './flight.js'
import { release, startFlight } from './flights.js'
import { type PlainMiss, type WaitMessage, msg } from './messages.js'
import type { Turn } from './state.js'
import { Waiter } from './waiter.js'

/**
 * Plain callers of one id: they join the flight the mailbox saw (holding its shared promise, or
 * lending it theirs), or the id's flight now, or take the answer of a flight that just filled the
 * row, or start a flight.
 */
export function onPlainMiss<V>(turn: Turn<V>, miss: PlainMiss<V>): void {
  const { state, env } = turn
  state.rows.touch(miss.id, miss.count)
  const flight = miss.flight ?? (state.coalesce ? state.flights.get(miss.id) : undefined)
  if (flight !== undefined) {
    state.counters[C.coalesced] += miss.count
    if (flight.running) flight.waiting += miss.count
    if (miss.resolve === undefined) return // they hold the flight's shared promise
    if (flight.shared === undefined && flight.running) flight.shared = miss
    else answerLate(miss, flight)
    return
  }
  const slot = state.rows.find(miss.id)
  if (state.coalesce) {
    const value = state.rows.liveAt(slot, env.clock.now())
    if (value !== NOT_LIVE) {
      state.counters[C.coalesced] += miss.count
      miss.resolve!(value)
      return
    }
  }
  const started = startFlight(turn, miss.id, miss.loader, state.rows.versionAt(slot))
  state.counters[C.coalesced] += miss.count - 1
  started.waiting += miss.count
  started.shared = miss
}

/** Callers with a promise of their own, joining a flight that already has a shared promise or has answered: they take that answer. */
function answerLate<V>(miss: PlainMiss<V>, flight: Flight<V>): void {
  if (flight.shared !== undefined) miss.resolve!(flight.shared.promise)
  else if (flight.answered?.ok === true) miss.resolve!(flight.answered.value)
  else if (flight.answered !== undefined) miss.reject!(flight.answered.error)
}

/** A caller with a signal or a deadline: it joins or starts a flight like any miss, and may leave early. */
export function onWait<V>(turn: Turn<V>, wait: WaitMessage<V>): void {
  const { state, env } = turn
  state.rows.touch(wait.id, 1)
  const waiter = new Waiter<V>(wait.signal, wait.timeout, wait.resolve, wait.reject, env.clock)
  const flight = state.coalesce ? state.flights.get(wait.id) : undefined
  if (flight !== undefined) {
    state.counters[C.coalesced]++
    flight.join(waiter)
  } else {
    const slot = state.rows.find(wait.id)
    const value = state.coalesce ? state.rows.liveAt(slot, env.clock.now()) : NOT_LIVE
    if (value !== NOT_LIVE) {
      state.counters[C.coalesced]++
      waiter.resolve(value)
      return
    }
    startFlight(turn, wait.id, wait.loader, state.rows.versionAt(slot)).join(waiter)
  }
  // The signal may have aborted between the fetch and this turn: the waiter leaves at once.
  if (wait.signal?.aborted === true) return onWaiterLeft(turn, waiter, 'cancel')
  const send = env.send
  turn.defer(() => waiter.listen((reason) => send(msg.waiterLeft(waiter, reason))))
}

/** A waiter leaves: its deadline passed, or its signal aborted. A flight left empty by cancellation is released. */
export function onWaiterLeft<V>(turn: Turn<V>, waiter: Waiter<V>, reason: 'timeout' | 'cancel'): void {
  const { state, env } = turn
  const flight = waiter.flight
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

/** A signal's reason; what its getter threw, when it throws (a hostile subclass): the waiter is answered either way. */
function abortReason(signal: AbortSignal): unknown {
  try {
    return signal.reason
  } catch (error) {
    return error
  }
}
