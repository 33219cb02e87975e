/**
 * The owner's handling of a flight's life: start, result, timeout, abandonment, and a late L2
 * refusal. A flight settles only what it still owns: a result that arrives after the flight was
 * released belongs to nobody and is dropped, and a fenced flight's answer is not stored.
 */
import { C } from '../core/counters.js'
import { emitSafely } from '../core/events.js'
import { LoadTimeoutError } from '../core/errors.js'
import type { Id } from '../core/id.js'
import { store } from './on-change.js'
import { absorbFailure, armSoftTimeout, fallbackFor } from './grace.js'
import { Flight, FlightContext, type FlightResult } from './flight.js'
import type { Loader } from './loader.js'
import { runFlight } from './load.js'
import { type Turn, listening } from './state.js'

/**
 * Starts a flight for `id`, whose row holds `known` (-1: no row): registered (joinable while the
 * gate is on), counted, bounded by `env.flightBound` (and by the soft timeout, when there is a graced
 * value). A `forced` one (a forced refresh) skips the L2 read. Its runner starts once the transition commits.
 */
export function startFlight<V>(turn: Turn<V>, id: Id, loader: Loader<V>, known: number, forced = false): Flight<V> {
  const { state, env } = turn
  const flight = new Flight<V>(id, state.coalesce, Math.max(known, 0), env.clock.now() + env.flightBound, forced, new FlightContext())
  if (flight.joinable) state.flights.set(id, flight)
  else state.solo.add(flight)
  state.inflight++
  state.counters[C.flights]++
  state.deadlines.add(flight)
  turn.started.push(flight, loader)
  armSoftTimeout(turn, flight)
  return flight
}

/** Starts the runners of the flights a transition started (one effect per transition). */
export function runStarted<V>(turn: Turn<V>): void {
  const started = turn.started.splice(0)
  const deps = turn.env.runner
  turn.defer(() => {
    for (let i = 0; i < started.length; i += 2) void runFlight(started[i] as Flight<V>, started[i + 1] as Loader<V>, deps)
  })
}

/** Ends a flight: it no longer runs, and its map entry (if still its own) goes. */
export function release<V>(turn: Turn<V>, flight: Flight<V>, early = true): void {
  const { state, env } = turn
  flight.running = false
  if (flight.softTimer !== undefined) env.clock.clearTimeout(flight.softTimer)
  if (early) state.deadlines.ended()
  if (state.flights.get(flight.id) === flight) state.flights.delete(flight.id)
  if (!flight.joinable) state.solo.delete(flight)
  state.inflight--
}

/** A flight's result: stored unless it was fenced or refused, then its one answer goes to every waiter. */
export function onFlightDone<V>(turn: Turn<V>, flight: Flight<V>, result: FlightResult<V>): void {
  if (!flight.running) return // timed out or abandoned: this result belongs to nobody
  const { state, env } = turn
  release(turn, flight)
  if (result.ok) {
    if (result.source === 'l2') state.counters[C.l2_hits]++
    const slot = state.rows.find(flight.id)
    const stale = flight.fenced || result.refused || state.rows.versionAt(slot) > result.version
    if (stale) state.counters[C.fenced]++
    else flight.stored = store(turn, flight.id, result.value, result.expiresAt, result.version, slot)
    const stored = flight.stored >= 0
    if (stored) state.counters[C.fills]++
    if (listening(turn)) turn.defer(() => emitSafely(env.events, 'fill', { table: env.name, id: flight.id, source: result.source, stored }))
    flight.answer(result)
  } else {
    state.counters[C.load_errors]++
    const fallback = fallbackFor(turn, flight, result.fallback)
    if (fallback !== undefined) return absorbFailure(turn, flight, result.error, fallback)
    if (listening(turn)) turn.defer(() => emitSafely(env.events, 'error', { table: env.name, id: flight.id, error: result.error }))
    flight.answer(result)
  }
}

/** L2 holds something newer than what the flight stored: drop the row, if it is still that row. */
export function onL2Refused<V>(turn: Turn<V>, flight: Flight<V>): void {
  const { rows, counters } = turn.state
  if (flight.stored < 0 || !rows.holds(flight.id, flight.stored)) return
  rows.delete(flight.id)
  flight.stored = -1
  counters[C.fenced]++
}

/** Every flight whose bound (`loadTimeout`, with a lease's wait) has passed: released, its loader aborted, its waiters answered with `LoadTimeoutError`. */
export function onDeadline<V>(turn: Turn<V>): void {
  const { state, env } = turn
  for (const flight of state.deadlines.expire()) {
    release(turn, flight, false)
    state.counters[C.load_errors]++
    const error = new LoadTimeoutError(env.name, flight.id, env.loadTimeout, env.flightBound)
    flight.context.abort(error)
    const fallback = fallbackFor(turn, flight)
    if (fallback !== undefined) absorbFailure(turn, flight, error, fallback)
    else flight.answer({ ok: false, error })
  }
}

/** The loader of a flight is being called: origin work. */
export function onLoad<V>(turn: Turn<V>, id: Id): void {
  const { state, env } = turn
  state.counters[C.loads]++
  if (listening(turn)) turn.defer(() => emitSafely(env.events, 'load', { table: env.name, id }))
}
