/**
 * The owner's use of graced values: a row's value kept `grace` ms past its expiry, which answers
 * callers when the origin fails (the fail-safe, then its back-off) or is slow (a soft timeout), and
 * which a stale-while-revalidate read took at once. A change always beats grace: a flight a change
 * fenced has no fallback, and a change leaves a fresh row or a tombstone where the graced value was.
 */
import { C } from '../core/counters.js'
import { emitSafely } from '../core/events.js'
import { tracedStale } from '../core/fetch-trace.js'
import type { Id } from '../core/id.js'
import { NOT_LIVE } from '../rows/row-store.js'
import { fill, known } from './row-writes.js'
import type { Fallback, Flight } from '../flight/flight.js'
import { msg } from './messages.js'
import type { Turn } from './state.js'
import type { Waiter } from '../flight/waiter.js'

/** Why callers got a graced value (see the `stale` event). */
export type StaleReason = 'swr' | 'failsafe' | 'backoff' | 'soft'

/**
 * The graced value a flight's callers may get: the newest one known (see {@link newer}), its row's
 * (fresh or within grace) or one the flight found in L2 within its grace (`fromL2`, by default the
 * one its runner reported: `Flight.l2Fallback`); an L2 value older than what the table knows never
 * answers. None without grace, and none for a flight a change fenced (a change beats grace; one a
 * forced refresh superseded keeps it: see `Flight.superseded`). A forced
 * refresh's own callers never take it (its loader answers them, or its error): only the unforced
 * callers who joined it do (see `Flight.forcedWaiting`).
 */
export function fallbackFor<V>(turn: Turn<V>, flight: Flight<V>, fromL2: Fallback<V> | undefined = flight.l2Fallback): Fallback<V> | undefined {
  const { state, env } = turn
  if (env.grace === 0 || flight.fencedByChange) return undefined
  const now = env.clock.now()
  const own = heldFallback(turn, state.rows.find(flight.id))
  const l2 = fromL2 !== undefined && fromL2.expiresAt + env.grace > now && fromL2.version >= known(state, flight.id) ? fromL2 : undefined
  return l2 !== undefined && (own === undefined || newer(l2, own)) ? l2 : own
}

/**
 * True when graced value `a` is newer than `b`: it carries a higher version or, at one version
 * (loads that report none, or a reload that carries the entry's version), it expires later: it was
 * written later. The one comparison of the fallback's choice ({@link fallbackFor}) and of the
 * fail-safe's store ({@link absorbFailure}).
 */
function newer(a: Pick<Fallback<unknown>, 'version' | 'expiresAt'>, b: Pick<Fallback<unknown>, 'version' | 'expiresAt'>): boolean {
  return a.version > b.version || (a.version === b.version && a.expiresAt > b.expiresAt)
}

/** The value the row at `slot` can stand in with now, fresh or within its grace (see `RowStore.gracedAt`); `undefined` for none. */
function heldFallback<V>(turn: Turn<V>, slot: number): Fallback<V> | undefined {
  const { rows } = turn.state
  const value = rows.gracedAt(slot, turn.env.clock.now())
  return value === NOT_LIVE ? undefined : { value, expiresAt: rows.expiryAt(slot), version: rows.versionAt(slot) }
}

/** The graced value that answers a miss on `id` during the fail-safe's back-off, if the id is in one. */
export function backedOff<V>(turn: Turn<V>, slot: number): Fallback<V> | undefined {
  if (turn.state.rows.retryAt(slot) <= turn.env.clock.now()) return undefined
  return heldFallback(turn, slot)
}

/**
 * True when a value that expires at `expiresAt` has expired now: answering it is a stale answer. A
 * graced value (a fallback) may be a live row another flight stored meanwhile (a forced refresh that
 * superseded the flight, or a solo flight with coalescing off): its callers then get a fresh answer,
 * neither counted nor traced as stale.
 */
export function pastExpiry<V>(turn: Turn<V>, expiresAt: number): boolean {
  return expiresAt <= turn.env.clock.now()
}

/** Counts `callers` answers served from a graced value that expired at `expiresAt`, and tells the listeners. */
export function servedStale<V>(turn: Turn<V>, id: Id, callers: number, expiresAt: number, reason: StaleReason): void {
  const { state, env } = turn
  if (callers === 0) return
  state.counters[C.stale_hits] += callers
  if (!turn.listening) return
  const staleness = Math.max(0, env.clock.now() - expiresAt)
  turn.defer(() => emitSafely(env.events, 'stale', { table: env.name, id, callers, staleness, reason }))
}

/**
 * The fail-safe: a failed flight's unforced callers get the graced value instead of `error` (still
 * emitted as an `error` event; a forced refresh's own callers get `error`), and the origin is not tried again for the id for `graceBackoff` ms (within the
 * grace): the graced row is re-armed, stored first when it came from L2.
 */
export function absorbFailure<V>(turn: Turn<V>, flight: Flight<V>, error: unknown, fallback: Fallback<V>): void {
  const { state, env } = turn
  state.counters[C.failsafe]++
  if (turn.listening) turn.defer(() => emitSafely(env.events, 'error', { table: env.name, id: flight.id, error }))
  const stale = pastExpiry(turn, fallback.expiresAt)
  if (stale) {
    servedStale(turn, flight.id, flight.waiting - flight.forcedWaiting, fallback.expiresAt, 'failsafe')
    tracedStale(flight.waiters)
  }
  flight.answer({ ok: true, value: fallback.value }, { ok: false, error })
  if (stale) flight.answeredStaleSince = fallback.expiresAt
  // A superseded flight's answers are never stored: nor is its fail-safe's, and it holds nothing off
  // (the forced refresh that superseded it has the row's say).
  if (flight.fenced) return
  let slot = state.rows.find(flight.id)
  // The row is re-armed when it holds the value answered; stored first when that came from L2 (newer, or the row has none).
  const held = heldFallback(turn, slot)
  if (held === undefined || newer(fallback, held)) {
    // Admitted whatever admission says: the row is where the back-off is held, and the id is being read (its flight had callers).
    if (fill(turn, flight, fallback.value, fallback.expiresAt, fallback.version, slot, fallback.tags, true) < 0) return
    slot = state.rows.find(flight.id)
  }
  state.rows.holdOff(slot, env.clock.now() + env.graceBackoff)
}

/** Arms a new flight's soft timeout, when the table has one and the id a graced value to answer with. */
export function armSoftTimeout<V>(turn: Turn<V>, flight: Flight<V>): void {
  const { env } = turn
  const ms = env.softTimeout
  if (ms === undefined || fallbackFor(turn, flight) === undefined) return
  turn.defer(() => {
    if (flight.running) flight.softTimer = env.clock.setTimeout(() => env.send(msg.soft(flight)), ms)
  })
}

/**
 * A flight's runner found a graced value in L2: it is the flight's to answer with (see
 * {@link fallbackFor}). A cold process has no graced row to arm a soft timeout with at the flight's
 * start: the table's soft timeout is armed now, for what remains of it (answered at once when it
 * passed already), and waiters whose own soft timeout passed with nothing to answer are answered now.
 */
export function onL2Graced<V>(turn: Turn<V>, flight: Flight<V>, fallback: Fallback<V>): void {
  if (!flight.running) return
  flight.l2Fallback = fallback
  const { env } = turn
  for (const waiter of flight.waiters ?? []) if (waiter.softDue && !waiter.settled) softLeave(turn, waiter)
  const ms = env.softTimeout
  if (ms === undefined || flight.softTimer !== undefined || flight.softened !== undefined || !flight.running) return
  // A flight's deadline is its start plus the flight bound.
  const left = flight.deadline - env.flightBound + ms - env.clock.now()
  if (left <= 0) return onSoftTimeout(turn, flight)
  turn.defer(() => {
    if (flight.running && flight.softTimer === undefined) flight.softTimer = env.clock.setTimeout(() => env.send(msg.soft(flight)), left)
  })
}

/** A waiter's soft timeout passed: it takes the graced value, if there is one, and leaves the flight, which goes on; else it may take one its flight finds in L2 later (`softDue`). */
export function softLeave<V>(turn: Turn<V>, waiter: Waiter<V>): void {
  const flight = waiter.flight
  // A forced refresh's caller is answered by its loader, never by a graced value.
  if (flight === undefined || !flight.running || waiter.settled || waiter.forced) return
  const fallback = fallbackFor(turn, flight)
  if (fallback === undefined) {
    waiter.softDue = true
    return
  }
  if (pastExpiry(turn, fallback.expiresAt)) {
    servedStale(turn, flight.id, 1, fallback.expiresAt, 'soft')
    if (waiter.trace !== undefined) waiter.trace.stale = true
  }
  waiter.resolve(fallback.value)
  flight.waiting--
  flight.promised = true
}

/** The graced value a flight past its soft timeout answers joiners with, while it is still within the grace; else undefined (they wait for the flight). */
export function softAnswer<V>(turn: Turn<V>, flight: Flight<V>): Flight<V>['softened'] {
  const softened = flight.softened
  return softened !== undefined && softened.expiresAt + turn.env.grace > turn.env.clock.now() ? softened : undefined
}

/**
 * A flight's soft timeout (the table's) passed: its callers that take it (unforced, without a soft
 * timeout of their own, see `Waiter.takesTableSoftTimeout`), and those who join it from now on, get
 * the graced value; the flight goes on.
 */
export function onSoftTimeout<V>(turn: Turn<V>, flight: Flight<V>): void {
  flight.softTimer = undefined
  if (!flight.running) return
  const fallback = fallbackFor(turn, flight)
  if (fallback === undefined) return
  flight.softened = { value: fallback.value, expiresAt: fallback.expiresAt }
  const stale = pastExpiry(turn, fallback.expiresAt)
  if (stale) for (const waiter of flight.waiters ?? []) if (waiter.trace !== undefined && waiter.takesTableSoftTimeout) waiter.trace.stale = true
  const answered = flight.answerEarly(fallback.value)
  if (stale) servedStale(turn, flight.id, answered, fallback.expiresAt, 'soft')
}
