/**
 * The owner: one xstate v5 actor per table, the sole writer of the flights map, the rows and the
 * owner's counters. Concurrent misses on one id coalesce onto a single in-flight load, and every
 * waiter of that flight receives its one answer (the same value object, or the same error).
 *
 * Every change of state arrives as a message through the actor's mailbox, so changes are
 * serialised without locks. Effects (starting a load, emitting events, stopping the actor) run in
 * `defer`, after the state change commits. The transition never throws: a throw would kill the
 * actor and silently drop every later message, leaving waiters pending forever.
 */
import { createActor, fromTransition } from 'xstate'
import type { Emitter } from 'mitt'
import { C } from '../counters.js'
import { LoadTimeoutError } from '../errors.js'
import type { Id } from '../id.js'
import type { ResolvedOptions } from '../options.js'
import { Row, jitterSpread, jitteredExpiry } from '../rows.js'
import type { Sweeper } from '../sweeper.js'
import type { TableEvents } from '../table-events.js'
import { type OwnerEvent, ev } from './events.js'
import { Flight, type FlightResult, type Loader, runLoad } from './flight.js'
import type { Waiter } from './waiter.js'

/** What the owner is given at construction; it keeps references, it copies nothing. */
export interface OwnerDeps<V> {
  options: ResolvedOptions
  /** The rows. Written only by the owner; read directly by the hit path. */
  rows: Map<Id, Row<V>>
  /** The counters array. The hit path writes hits, misses and negative_hits; the owner the rest. */
  counters: Float64Array
  sweeper: Sweeper
  events: Emitter<TableEvents>
}

/** The owner's own state. Every field is written only inside the owner's transition. */
interface OwnerState<V> {
  /** Joinable flights by id: only flights started while the coalescing gate was on. */
  readonly flights: Map<Id, Flight<V>>
  /** Flights running now, joinable or not. */
  inflight: number
  /** The coalescing gate. */
  coalesce: boolean
  /** Set by `close`: stop once `inflight` reaches 0. */
  closing: boolean
}

/** A running owner: its mailbox, and what the table facade may read. */
export interface Owner<V> {
  /** Enqueues a message; processed synchronously when the mailbox is idle. Dropped after stop. */
  send(event: OwnerEvent<V>): void
  /** Flights running now. */
  inflight(): number
  /** Resolves once the owner has stopped (after `close` and the last flight). */
  readonly stopped: Promise<void>
}

/** Starts the owner actor for one table. */
export function startOwner<V>(deps: OwnerDeps<V>): Owner<V> {
  const { options, rows, counters, sweeper, events } = deps
  const { name, ttl, negativeTtl, capacity, loadTimeout, clock, random } = options
  const spread = jitterSpread(ttl, options.jitter)
  const negativeSpread = jitterSpread(negativeTtl, options.jitter)
  const state: OwnerState<V> = { flights: new Map(), inflight: 0, coalesce: options.coalesce, closing: false }
  const listening = () => events.all.size > 0

  let isStopped = false
  let markStopped!: () => void
  const stopped = new Promise<void>((resolve) => (markStopped = resolve))

  // ---- state changes (called only from the transition) ----

  /** Writes a row for `id`; returns false when it was not stored (full table, or negative caching off). */
  function store(id: Id, value: V | undefined, now: number): boolean {
    const negative = value === undefined
    const life = negative ? negativeTtl : ttl
    if (life === 0) {
      rows.delete(id)
      return false
    }
    if (rows.size >= capacity && !rows.has(id)) {
      counters[C.full_skips]++
      return false
    }
    const expiresAt = jitteredExpiry(now, life, negative ? negativeSpread : spread, random)
    rows.set(id, new Row(value, expiresAt, 0))
    sweeper.track(id, expiresAt)
    return true
  }

  /** Ends a flight: it no longer runs, its timer is cleared, its map entry (if still its own) goes. */
  function release(flight: Flight<V>): void {
    flight.running = false
    if (flight.timer !== undefined) clock.clearTimeout(flight.timer)
    flight.timer = undefined
    if (state.flights.get(flight.id) === flight) state.flights.delete(flight.id)
    state.inflight--
  }

  function answer(flight: Flight<V>, result: FlightResult<V>): void {
    const { waiters } = flight
    if (result.ok) for (const waiter of waiters) waiter.resolve(result.value)
    else for (const waiter of waiters) waiter.reject(result.error)
    flight.waiting = 0
  }

  function startFlight(id: Id, loader: Loader<V>, waiter: Waiter<V>, defer: (fn: () => void) => void): void {
    const flight = new Flight<V>(id, state.coalesce)
    if (flight.registered) state.flights.set(id, flight)
    state.inflight++
    counters[C.flights]++
    flight.join(waiter)
    flight.timer = clock.setTimeout(() => owner.send(ev.flightTimeout(flight)), loadTimeout)
    defer(() => {
      void runLoad(flight, loader, () => {
        counters[C.loads]++
        if (listening()) events.emit('load', { table: name, id })
      }).then((result) => owner.send(ev.flightDone(flight, result)))
    })
  }

  function onMiss(id: Id, loader: Loader<V>, waiter: Waiter<V>, defer: (fn: () => void) => void): void {
    const flight = state.coalesce ? state.flights.get(id) : undefined
    if (flight !== undefined) {
      flight.join(waiter)
      counters[C.coalesced]++
    } else {
      startFlight(id, loader, waiter, defer)
    }
  }

  function onFlightDone(flight: Flight<V>, result: FlightResult<V>, defer: (fn: () => void) => void): void {
    if (!flight.running) return // timed out or abandoned: this result belongs to nobody
    release(flight)
    if (result.ok) {
      if (store(flight.id, result.value, clock.now())) counters[C.fills]++
      if (listening()) defer(() => events.emit('fill', { table: name, id: flight.id, source: result.source }))
    } else {
      counters[C.load_errors]++
      if (listening()) defer(() => events.emit('error', { table: name, id: flight.id, error: result.error }))
    }
    answer(flight, result)
  }

  function onFlightTimeout(flight: Flight<V>): void {
    if (!flight.running) return
    release(flight)
    counters[C.load_errors]++
    const error = new LoadTimeoutError(name, flight.id, loadTimeout)
    flight.abort(error)
    answer(flight, { ok: false, error })
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

  function onSweep(now: number, first: boolean, defer: (fn: () => void) => void): void {
    if (first) counters[C.sweeps]++
    const swept = sweeper.reclaim(rows, now)
    counters[C.swept] += swept
    if (swept > 0 && listening()) defer(() => events.emit('sweep', { table: name, swept }))
  }

  function transition(event: OwnerEvent<V>, defer: (fn: () => void) => void): void {
    switch (event.type) {
      case 'miss':
        return onMiss(event.id, event.loader, event.waiter, defer)
      case 'flight.done':
        return onFlightDone(event.flight, event.result, defer)
      case 'flight.timeout':
        return onFlightTimeout(event.flight)
      case 'waiter.left':
        return onWaiterLeft(event.waiter, event.reason, event.error)
      case 'put':
        store(event.id, event.value, clock.now())
        return
      case 'invalidate':
        rows.delete(event.id)
        return
      case 'sweep':
        return onSweep(event.now, event.first, defer)
      case 'gate':
        state.coalesce = event.on
        return
      case 'close':
        state.closing = true
        sweeper.stop()
        return
    }
  }

  const logic = fromTransition((s: OwnerState<V>, event: OwnerEvent<V>, scope) => {
    try {
      transition(event, scope.defer)
    } catch (error) {
      // Never let a throw escape into xstate: report it and keep the actor alive.
      scope.defer(() => events.emit('error', { table: name, id: undefined, error }))
    }
    if (s.closing && s.inflight === 0 && !isStopped) {
      isStopped = true
      scope.defer(() => {
        actor.stop()
        markStopped()
      })
    }
    return s
  }, state)

  const actor = createActor(logic)
  actor.start()

  const owner: Owner<V> = {
    send(event) {
      if (!isStopped) actor.send(event)
    },
    inflight: () => state.inflight,
    stopped,
  }
  return owner
}

