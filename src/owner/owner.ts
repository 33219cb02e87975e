/**
 * The owner: one xstate v5 actor per table, the sole writer of the flights map, the rows and the
 * owner's counters. Concurrent misses on one id coalesce onto a single in-flight load, and every
 * waiter of that flight receives its one answer (the same value object, or the same error).
 *
 * Every change of state arrives as a message through the actor's mailbox, so changes are
 * serialised without locks. Effects (starting a load, emitting events, stopping the actor) run in
 * `defer`, after the state change commits. The transition never throws: a throw would kill the
 * actor and silently drop every later message, leaving waiters pending forever.
 *
 * Versions: every row remembers the version of what it holds, and an invalidation leaves a
 * tombstone row that remembers its version. A change (put, invalidate, coherence message) newer
 * than a flight's starting version fences that flight: its waiters still get its answer, but it is
 * no longer joinable and its answer is not stored.
 */
import type { Emitter } from 'mitt'
import { createActor, fromTransition } from 'xstate'
import type { CoherenceMessage } from '../bus/bus.js'
import { C } from '../counters.js'
import { emitSafely } from '../emit-safely.js'
import { LoadTimeoutError } from '../errors.js'
import type { Id } from '../id.js'
import type { L2Facade } from '../l2/facade.js'
import type { ResolvedOptions } from '../options.js'
import type { RowStore } from '../row-store.js'
import type { Expiry } from '../rows.js'
import type { Sweeper } from '../sweeper.js'
import type { TableEvents } from '../table-events.js'
import { Deadlines } from './deadlines.js'
import { type ChangeReply, type MissEvent, type OwnerEvent, ev } from './events.js'
import { Flight, type FlightDeps, type FlightResult, type Loader, runFlight } from './flight.js'
import type { Waiter } from './waiter.js'

/** What the owner is given at construction; it keeps references, it copies nothing. */
export interface OwnerDeps<V> {
  options: ResolvedOptions
  /** The rows. Written only by the owner; read directly by the hit path. */
  rows: RowStore<V>
  /** The counters array. The hit path writes hits, misses and negative_hits; the owner the rest. */
  counters: Float64Array
  sweeper: Sweeper
  events: Emitter<TableEvents>
  expiry: Expiry
  l2: L2Facade | undefined
}

/** The owner's own state. Every field is written only inside the owner's transition. */
interface OwnerState<V> {
  /** Joinable flights by id: flights started while the coalescing gate was on, and not fenced. */
  readonly flights: Map<Id, Flight<V>>
  /** Running flights that are not joinable (started with the gate off); fenced by id like the others. */
  readonly solo: Set<Flight<V>>
  /** How many flights run now, joinable or not. */
  inflight: number
  /** The coalescing gate. */
  coalesce: boolean
  /** Set by `close`: stop once no flight runs. */
  closing: boolean
}

/**
 * A running owner: its mailbox, and what the table facade may read. Joins of a flight in progress
 * and flight results are *posted*: gathered for the rest of the current turn and sent as one batch,
 * so a herd of N misses costs two messages, not N. Any other message is *sent* (a miss that starts
 * a flight, so its loader runs at once): the posted batch goes first, so the mailbox order is
 * always the order in which things happened.
 */
export interface Owner<V> {
  /** Sends the posted batch, then `event`; processed synchronously when the mailbox is idle. Returns false (dropped) after stop. */
  send(event: OwnerEvent<V>): boolean
  /** Adds `event` to the batch sent at the end of this turn (a microtask), or by the next `send`. */
  post(event: OwnerEvent<V>): void
  /** The flight a miss on `id` would join now, if any (a read-only peek at the flights map). */
  joinable(id: Id): Flight<V> | undefined
  /** True while the owner processes a message: a message sent now is queued, not processed before `send` returns. */
  busy(): boolean
  /** The highest version this table holds for `id` (row, tombstone or joinable flight); -1 when none. A read-only peek. */
  known(id: Id): number
  /** Flights running now. */
  inflight(): number
  /** Resolves once the owner has stopped (after `close` and the last flight). */
  readonly stopped: Promise<void>
}

type Defer = (effect: () => void) => void

/** Starts the owner actor for one table. */
export function startOwner<V>(deps: OwnerDeps<V>): Owner<V> {
  const { options, rows, counters, sweeper, events, expiry, l2 } = deps
  const { name, loadTimeout, clock } = options
  /** How long a tombstone is remembered: long enough to outlive any flight or row it fences. */
  const tombstoneLife = Math.max(options.ttl, loadTimeout)
  const state: OwnerState<V> = { flights: new Map(), solo: new Set(), inflight: 0, coalesce: options.coalesce, closing: false }
  const listening = () => events.all.size > 0
  const flightDeps: FlightDeps<V> = {
    clock,
    expiry,
    l2,
    onLoad(id) {
      counters[C.loads]++
      if (listening()) emitSafely(events, 'load', { table: name, id })
    },
    report: (flight, result) => owner.post(ev.flightDone(flight, result)),
    refused: (flight) => owner.post(ev.l2Refused(flight)),
  }

  const deadlines = new Deadlines<Flight<V>>(clock, loadTimeout, () => owner.send(ev.deadline()))
  let isStopped = false
  let markStopped!: () => void
  const stopped = new Promise<void>((resolve) => (markStopped = resolve))

  // ---- state changes (called only from the transition) ----

  /** The highest version known for `id`: its row's (or tombstone's) and its joinable flight's; -1 when none. */
  function held(id: Id): number {
    const flight = state.flights.get(id)
    return Math.max(rows.version(id), flight === undefined ? -1 : flight.version)
  }

  /** Writes a row for `id`; returns the write's stamp, or -1 when it was not stored (not cacheable, or the table is full). */
  function store(id: Id, value: V | undefined, expiresAt: number | undefined, version: number): number {
    if (expiresAt === undefined) {
      // Not cacheable (negativeTtl 0): drop the old row, but remember a known version.
      if (version > 0) bury(id, version)
      else rows.delete(id)
      return -1
    }
    const stamp = rows.set(id, value, expiresAt, version)
    if (stamp < 0) counters[C.full_skips]++
    else sweeper.track(id, expiresAt)
    return stamp
  }

  /** Replaces the row with a tombstone remembering `version` for `max(ttl, loadTimeout)` (none for a new id on a full table). */
  function bury(id: Id, version: number): void {
    const forgetAt = clock.now() + tombstoneLife
    if (rows.bury(id, version, forgetAt) >= 0) sweeper.track(id, forgetAt)
  }

  /** True when a flight for `id` runs now, joinable or not. */
  function hasRunning(id: Id): boolean {
    if (state.flights.has(id)) return true
    for (const solo of state.solo) if (solo.id === id) return true
    return false
  }

  /** Fences every running flight of `id` that started from a version no newer than `version`. */
  function fence(id: Id, version: number): void {
    const flight = state.flights.get(id)
    if (flight !== undefined && flight.version <= version) {
      flight.fenced = true
      state.flights.delete(id)
    }
    for (const solo of state.solo) if (solo.id === id && solo.version <= version) solo.fenced = true
  }

  /** Ends a flight: it no longer runs, and its map entry (if still its own) goes. */
  function release(flight: Flight<V>, early = true): void {
    flight.running = false
    if (early) deadlines.ended()
    if (state.flights.get(flight.id) === flight) state.flights.delete(flight.id)
    state.inflight--
    if (!flight.registered) state.solo.delete(flight)
  }

  function startFlight(id: Id, loader: Loader<V>, waiter: Waiter<V> | undefined, defer: Defer): Flight<V> {
    const flight = new Flight<V>(id, state.coalesce, Math.max(rows.version(id), 0))
    if (flight.registered) state.flights.set(id, flight)
    else state.solo.add(flight)
    state.inflight++
    counters[C.flights]++
    if (waiter !== undefined) flight.join(waiter)
    else flight.waiting++
    deadlines.add(flight)
    if (toStart.push(flight, loader) === 2) defer(startLoads)
    return flight
  }

  /** Flights (and their loaders) started by the current transition, run by one deferred effect. */
  const toStart: (Flight<V> | Loader<V>)[] = []
  function startLoads(): void {
    for (let i = 0; i < toStart.length; i += 2) void runFlight(toStart[i] as Flight<V>, toStart[i + 1] as Loader<V>, flightDeps)
    toStart.length = 0
  }

  function onMiss(event: MissEvent<V>, defer: Defer): void {
    const { id, waiter } = event
    if (state.coalesce) {
      const flight = state.flights.get(id)
      if (flight !== undefined) {
        if (waiter !== undefined) flight.join(waiter)
        else flight.waiting++
        counters[C.coalesced]++
        event.flight = flight
        return
      }
      // A miss posted before a flight for the id filled the row gets that flight's answer.
      const slot = rows.slots.get(id)
      if (waiter !== undefined && slot !== undefined && rows.expires[slot]! > clock.now()) {
        counters[C.coalesced]++
        waiter.resolve(rows.values[slot])
        return
      }
    }
    event.flight = startFlight(id, event.loader, waiter, defer)
  }

  function onJoin(flight: Flight<V>): void {
    const joins = flight.joined - flight.joinsCounted
    flight.joinsCounted = flight.joined
    counters[C.coalesced] += joins
    if (flight.running) flight.waiting += joins
  }

  function onFlightDone(flight: Flight<V>, result: FlightResult<V>, defer: Defer): void {
    if (!flight.running) return // timed out or abandoned: this result belongs to nobody
    release(flight)
    if (result.ok) {
      if (result.source === 'l2') counters[C.l2_hits]++
      const stale = flight.fenced || result.refused || rows.version(flight.id) > result.version
      if (stale) counters[C.fenced]++
      else flight.stored = store(flight.id, result.value, result.expiresAt, result.version)
      const stored = flight.stored >= 0
      if (stored) counters[C.fills]++
      if (listening()) defer(() => emitSafely(events, 'fill', { table: name, id: flight.id, source: result.source, stored }))
    } else {
      counters[C.load_errors]++
      if (listening()) defer(() => emitSafely(events, 'error', { table: name, id: flight.id, error: result.error }))
    }
    flight.answer(result)
  }

  /** L2 holds something newer than what the flight stored: drop the row, if it is still that row. */
  function onL2Refused(flight: Flight<V>): void {
    if (flight.stored < 0 || !rows.holds(flight.id, flight.stored)) return
    rows.delete(flight.id)
    flight.stored = -1
    counters[C.fenced]++
  }

  function onFlightTimeout(flight: Flight<V>): void {
    release(flight, false)
    counters[C.load_errors]++
    const error = new LoadTimeoutError(name, flight.id, loadTimeout)
    flight.abort(error)
    flight.answer({ ok: false, error })
  }

  function onWaiterLeft(waiter: Waiter<V>, reason: 'timeout' | 'cancel', error: unknown): void {
    if (!waiter.reject(error)) return
    counters[reason === 'timeout' ? C.timeouts : C.cancelled]++
    const flight = waiter.flight
    if (flight === undefined || !flight.running) return
    flight.waiting--
    // A flight whose waiters all timed out goes on and fills; one left empty by cancellation is released.
    if (flight.waiting === 0 && reason === 'cancel') {
      release(flight)
      counters[C.abandoned]++
      flight.abort(error)
    }
  }

  function onPut(id: Id, value: V | undefined, expiresAt: number | undefined, given: number | undefined, refused: boolean, reply: ChangeReply): void {
    const known = held(id)
    const version = given ?? Math.max(known, 0) + 1
    if (refused || version < known) return reply(false, version)
    fence(id, version)
    store(id, value, expiresAt, version)
    reply(true, version)
  }

  function onInvalidate(id: Id, given: number | undefined, reply: ChangeReply): void {
    const known = held(id)
    const version = given ?? Math.max(known, 0) + 1
    if (version < known) return reply(false, version)
    fence(id, version)
    bury(id, version)
    reply(true, version)
  }

  function onCoherence(message: CoherenceMessage, defer: Defer): void {
    const { id, version, kind } = message
    const known = held(id)
    const applied = version > known
    if (applied) {
      // A tombstone only where there is something to fence: messages about ids this table never
      // read must not use up its capacity.
      const holds = rows.has(id) || hasRunning(id)
      fence(id, version)
      if (holds) bury(id, version)
      counters[C.coh_applied]++
    } else {
      counters[C.coh_stale]++
    }
    if (listening()) defer(() => emitSafely(events, 'coherence', { table: name, id, version, kind, applied }))
  }

  function onGap(defer: Defer): void {
    const dropped = rows.size
    rows.clear()
    for (const flight of state.flights.values()) flight.fenced = true
    for (const flight of state.solo) flight.fenced = true
    state.flights.clear()
    counters[C.coh_gaps]++
    counters[C.coh_dropped] += dropped
    if (listening()) defer(() => emitSafely(events, 'gap', { table: name, dropped }))
  }

  function onSweep(now: number, first: boolean, defer: Defer): void {
    if (first) counters[C.sweeps]++
    const swept = sweeper.reclaim(rows, now)
    counters[C.swept] += swept
    if (swept > 0 && listening()) defer(() => emitSafely(events, 'sweep', { table: name, swept }))
  }

  function transition(event: OwnerEvent<V>, defer: Defer): void {
    switch (event.type) {
      case 'miss':
        return onMiss(event, defer)
      case 'join':
        return onJoin(event.flight)
      case 'flight.done':
        return onFlightDone(event.flight, event.result, defer)
      case 'l2.refused':
        return onL2Refused(event.flight)
      case 'deadline':
        for (const flight of deadlines.expire()) onFlightTimeout(flight)
        return
      case 'batch':
        for (const posted of event.events) transition(posted, defer)
        return
      case 'waiter.left':
        return onWaiterLeft(event.waiter, event.reason, event.error)
      case 'put':
        return onPut(event.id, event.value, event.expiresAt, event.version, event.refused, event.reply)
      case 'invalidate':
        return onInvalidate(event.id, event.version, event.reply)
      case 'coherence':
        return onCoherence(event.message, defer)
      case 'gap':
        return onGap(defer)
      case 'sweep':
        return onSweep(event.now, event.first, defer)
      case 'gate':
        state.coalesce = event.on
        return
      case 'close':
        state.closing = true
        sweeper.stop()
        return
      default:
        throw new TypeError(`echostore: the owner got an unknown message ${JSON.stringify((event as { type?: unknown }).type)}`)
    }
  }

  let processing = false
  const logic = fromTransition((s: OwnerState<V>, event: OwnerEvent<V>, scope) => {
    if (event.type.startsWith('xstate.')) return s // the actor's own lifecycle events (xstate.stop)
    processing = true
    try {
      transition(event, scope.defer)
    } catch (error) {
      // Never let a throw escape into xstate: report it and keep the actor alive.
      scope.defer(() => emitSafely(events, 'error', { table: name, id: undefined, error }))
    }
    scope.defer(() => (processing = false)) // deferred last: after the effects of this transition
    if (s.closing && s.inflight === 0 && inbox.length === 0 && !isStopped) {
      isStopped = true
      deadlines.stop()
      scope.defer(() => {
        actor.stop()
        markStopped()
      })
    }
    return s
  }, state)

  const actor = createActor(logic)
  actor.start()

  let inbox: OwnerEvent<V>[] = []
  const flush = () => {
    if (inbox.length === 0 || isStopped) return
    const batch = inbox
    inbox = []
    actor.send(ev.batch(batch))
  }

  const owner: Owner<V> = {
    send(event) {
      flush()
      if (isStopped) return false
      actor.send(event)
      return true
    },
    post(event) {
      if (inbox.push(event) === 1) queueMicrotask(flush)
    },
    joinable: (id) => (state.coalesce ? state.flights.get(id) : undefined),
    busy: () => processing,
    known: held,
    inflight: () => state.inflight,
    stopped,
  }
  return owner
}
