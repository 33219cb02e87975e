/**
 * The owner: one xstate v5 actor per table, the only writer of the table's flights, waiters, rows
 * and owner counters (see `state.ts`; the origin-work counters are its runners' port's), fed by one
 * mailbox (see `mailbox.ts`). This module wires the actor, its mailbox, its bus subscription (heard
 * until the owner has stopped), the port its flights'
 * runners report through, and the timers and L2 facade that report to it, and is all the table facade
 * sees of the owner: it asks for a promise with {@link Owner.miss} or {@link Owner.wait} and never
 * touches a flight or a waiter. It also holds the table's one closing flag, written only by
 * {@link Owner.close}.
 */
import type { Emitter } from 'mitt'
import { C } from '../core/counters.js'
import type { Fallback, Flight, FlightResult } from '../flight/flight.js'
import type { LeaseRole } from '../runner/lease.js'
import type { RunnerPort } from '../runner/port.js'
import { createActor } from 'xstate'
import { TableClosedError } from '../core/errors.js'
import { type Id, callerIdOf } from '../core/id.js'
import { L2Facade } from '../l2/facade.js'
import type { ResolvedOptions } from '../table/options.js'
import { Sweeper } from './sweep-timer.js'
import { BatchWindow } from '../runner/batch-window.js'
import { Announcements, type Publisher, publish } from '../bus/publish.js'
import { type TableEvents, emitSafely } from '../core/events.js'
import { type Expiry, jitterSpread } from '../rows/expiry.js'
import type { Origin } from './loader.js'
import { guardInspector } from './inspector.js'
import { Handover, ownerLogic } from './logic.js'
import { Mailbox } from './mailbox.js'
import { type Message, type WaitOptions, answerUnhandled, msg } from './messages.js'
import { type OwnerEnv, type OwnerState, initialState } from './state.js'
import { type RunnerDeps, WritesInProgress } from '../runner/run.js'

/** What the table facade may do with its owner. */
export interface Owner<V> {
  /** A plain miss (no signal, no deadline): joins the id's flight or starts one; the promise is shared with the id's other plain callers. `tagStale`: the read found a row older than one of its tags (the owner counts it for each caller). */
  miss(id: Id, loader: Origin<V>, tagStale: boolean): Promise<V | undefined>
  /** A plain read of the id this turn's last plain miss was for: counted on that miss, its promise returned; else `undefined` (see `Mailbox.repeat`). */
  repeat(id: Id): Promise<V | undefined> | undefined
  /** A plain forced refresh (`forceRefresh`): joins the id's flight or starts one that takes no answer from L2; a read made after it joins it (see `Mailbox.supersede`). */
  forcedMiss(id: Id, loader: Origin<V>): Promise<V | undefined>
  /** A caller answered `id`'s graced value at once, `staleness` ms past its expiry: the id's refresh flight is started or joined (stale-while-revalidate). */
  refresh(id: Id, loader: Origin<V>, staleness: number): void
  /** A miss with a signal, a deadline or a soft timeout (or a forced one with any of them, see `Mailbox.supersede`): the caller's own promise, which may settle early. */
  wait(id: Id, loader: Origin<V>, options: WaitOptions): Promise<V | undefined>
  /** True when called from the synchronous part of the loader of `id` on this table (a fetch of `id` now would wait on its own load). */
  insideLoaderOf(id: Id): boolean
  /** True once {@link close} was called: new work is refused. */
  readonly closed: boolean
  /** Refuses new work from now on, stops the sweeper, lets the flights in progress answer, then stops the actor (and, with `closeStores`, closes the L2 store and bus); the same promise every call. */
  close(): Promise<void>
  /** Posts a message (handed over with the rest of this turn's). */
  post(message: Message<V>): void
  /** Posts a message and hands the turn over now. */
  send(message: Message<V>): void
  /** The owner's working state (see `state.ts`). */
  readonly state: OwnerState<V>
  /** The table's L2 facade, if it has an L2. */
  readonly l2: L2Facade | undefined
  /** Resolves once every flight write-back to L2 in progress now has settled (each is bounded by the store's timeout). */
  writesSettled(): Promise<void>
  /** What the table publishes on its bus with (failures counted by the owner). */
  readonly publisher: Publisher
  /** Resolves once the owner has stopped (after `close` and the last flight). */
  readonly stopped: Promise<void>
}

/** What the table hands its owner besides its options. */
export interface OwnerWiring {
  /** The table instance's id on the bus. */
  origin: string
  events: Emitter<TableEvents>
  expiry: Expiry
  /** How long a flight may run before `LoadTimeoutError` (see `flightBoundOf`). */
  flightBound: number
  /** How long a tombstone is remembered: long enough to outlive any flight or row it fences. */
  tombstoneLife: number
}

/** Starts the owner actor of one table. */
export function startOwner<V>(options: ResolvedOptions, { origin, events, expiry, flightBound, tombstoneLife }: OwnerWiring): Owner<V> {
  const { name, clock } = options
  const state = initialState<V>(options.capacity, options.grace, options.coalesce, clock, () => send(msg.deadline()), options.maxSize)
  const mailbox = new Mailbox<V, Message<V>>((messages) => deliver(messages), state)
  const post = (message: Message<V>): void => mailbox.post(message)
  const send = (message: Message<V>): void => mailbox.send(message)
  const publisher: Publisher = { name, bus: options.bus, clock, events, count: (counter) => post(msg.count(counter)), space: options.space, announcing: new Announcements() }
  const l2 = options.l2 && new L2Facade(options.l2, name, clock, (counter) => post(msg.count(counter)), events, state.tags)
  const runner: RunnerDeps<V> = {
    table: name,
    clock,
    expiry,
    l2,
    grace: options.grace,
    tombstoneLife,
    lease: options.lease,
    loading: { id: undefined, batch: undefined },
    writing: new WritesInProgress(),
    bornNow: () => Math.max(state.versions.peek(clock.now()), l2 === undefined ? 0 : l2.seenTagVersion + 1),
    putting: (id) => state.puts.has(id),
    announceFill(id, version) {
      void publish(publisher, id, { table: name, id, version, kind: 'fill', origin }, true)
    },
    announceUnfilled(id, version, lease, failed) {
      void publish(publisher, id, { table: name, id, version, kind: 'unfilled', origin, lease, ...(failed ? { failed: true as const } : {}) }, true)
    },
    port: new OwnerPort<V>(name, state.counters, events, post, () => mailbox.forgetLast()),
  }
  const env: OwnerEnv<V> = {
    name,
    origin,
    space: options.space,
    clock,
    loadTimeout: options.loadTimeout,
    flightBound,
    tombstoneLife,
    sweepPeriod: Math.max(options.sweepInterval, options.ttl / 16),
    sweepInterval: options.sweepInterval,
    grace: options.grace,
    sizeOf: options.sizeOf as ((value: V, id: Id) => unknown) | undefined,
    l2EntryLife: l2 === undefined ? 0 : Math.max(options.ttl, options.negativeTtl) + jitterSpread(Math.max(options.ttl, options.negativeTtl), options.jitter) + options.grace,
    graceBackoff: options.graceBackoff,
    softTimeout: options.softTimeout,
    sweeper: new Sweeper(clock, options.sweepInterval, (tick) => send(msg.sweep(tick))),
    events,
    runner,
    batchWindow: new BatchWindow(runner),
    send,
    closing: () => owner.closed,
  }
  const handover = new Handover()
  const actor = createActor(ownerLogic(env, state, handover), options.inspect === undefined ? {} : { inspect: guardInspector(options.inspect) })
  const stopped = new Promise<void>((resolve) => {
    // Once the owner has stopped, no L2 call nor announcement of this table keeps a timer on its clock.
    const stop = () => {
      try {
        unsubscribe?.()
      } catch (error) {
        // A bus whose unsubscribe throws still lets the owner stop: reported, never a close() left pending.
        emitSafely(events, 'error', { table: options.name, id: undefined, error })
      }
      l2?.stop()
      publisher.announcing.end()
      resolve()
    }
    actor.subscribe({ complete: stop, error: stop })
  })
  /** What `close` resolves: the owner stopped, then, with `closeStores`, the table's L2 store and bus closed. */
  const closed = options.closeStores ? stopped.then(() => closeStores(options)) : stopped
  const owner = new StartedOwner<V>(state, mailbox, env.runner, l2, publisher, stopped, closed)
  // The table hears its bus until its owner has stopped, not only until close(): a flight still
  // answering after close() is fenced by a change heard meanwhile, as it was before.
  const unsubscribe = options.bus?.subscribe((delivery) => owner.send(msg.delivery(delivery)))

  /**
   * Hands a batch to the actor, or, once it has stopped, refuses its messages. Handed over while the
   * actor processes a batch (from a `sizeOf`, an inspector, an abort listener the owner fires), it
   * waits in xstate's mailbox: counted in `handover`, so the owner does not stop before taking it.
   */
  function deliver(messages: Message<V>[]): void {
    if (actor.getSnapshot().status !== 'active') {
      for (const message of messages) refuse(message)
      return
    }
    handover.handed++
    actor.send({ type: 'batch', messages })
  }

  /**
   * Answers a message that reached a stopped owner: nothing is left pending (every message with a
   * reply is answered here), and a count is still counted (a late runner's failed publish, a late L2
   * outcome). The stopped owner is the counters' one writer then: its transition runs no more.
   */
  function refuse(message: Message<V>): void {
    if (message.type === 'count') state.counters[C[message.counter]]++
    else answerUnhandled(message, (id) => new TableClosedError(name, callerIdOf(id)))
  }

  actor.start()
  env.sweeper.start()
  return owner
}

/**
 * The {@link Owner} a started actor is seen through. A class, not an object literal: the facade
 * calls it on every read, and an object literal with a getter is a dictionary-mode object, where
 * each of those calls is a hash lookup.
 */
class StartedOwner<V> implements Owner<V> {
  /** The table's one closing flag: written only by {@link close}; read by the facade, the change path and the transition. */
  #closing = false
  readonly #mailbox: Mailbox<V, Message<V>>
  /** The id (or batch ids) whose loader runs now: written by the flight runners, read here (see `RunnerDeps.loading`). */
  readonly #loading: RunnerDeps<V>['loading']
  /** The flight write-backs to L2 in progress (see `RunnerDeps.writing`). */
  readonly #writing: RunnerDeps<V>['writing']
  /** What {@link close} resolves. */
  readonly #closed: Promise<void>

  constructor(
    readonly state: OwnerState<V>,
    mailbox: Mailbox<V, Message<V>>,
    runner: RunnerDeps<V>,
    readonly l2: L2Facade | undefined,
    readonly publisher: Publisher,
    readonly stopped: Promise<void>,
    closed: Promise<void>,
  ) {
    this.#mailbox = mailbox
    this.#loading = runner.loading
    this.#writing = runner.writing
    this.#closed = closed
  }

  get closed(): boolean {
    return this.#closing
  }

  miss(id: Id, loader: Origin<V>, tagStale: boolean): Promise<V | undefined> {
    return this.#mailbox.miss(id, loader, tagStale)
  }

  repeat(id: Id): Promise<V | undefined> | undefined {
    return this.#mailbox.repeat(id)
  }

  insideLoaderOf(id: Id): boolean {
    const { id: loadingId, batch } = this.#loading
    // Asked by every read, a herd's every waiter: with no loader running (most of the time) it compares
    // only with `undefined`, where comparing an id with an id may take a generic comparison.
    if (loadingId === undefined && batch === undefined) return false
    return loadingId === id || batch?.has(id) === true
  }

  close(): Promise<void> {
    if (!this.#closing) {
      this.#closing = true
      this.#mailbox.send(msg.close())
    }
    return this.#closed
  }

  forcedMiss(id: Id, loader: Origin<V>): Promise<V | undefined> {
    return this.#mailbox.forcedMiss(id, loader)
  }

  refresh(id: Id, loader: Origin<V>, staleness: number): void {
    this.#mailbox.refresh(id, loader, staleness)
  }

  wait(id: Id, loader: Origin<V>, options: WaitOptions): Promise<V | undefined> {
    if (options.forced) this.#mailbox.supersede(id)
    return new Promise<V | undefined>((resolve, reject) => this.#mailbox.post(msg.wait(id, loader, options, resolve, reject)))
  }

  post(message: Message<V>): void {
    this.#mailbox.post(message)
  }

  send(message: Message<V>): void {
    this.#mailbox.send(message)
  }

  async writesSettled(): Promise<void> {
    await this.#writing.settled()
  }
}

/**
 * The owner's side of its runners' port: a result travels as the flight itself (one message, no
 * object made for it), a graced L2 entry and a late L2 refusal as messages; the loader's call is
 * counted here, as it happens, with no owner turn. The origin-work counters (`loads`, `batch_loads`,
 * `batch_ids`, `lease_acquired`, `lease_lost`) are written only by {@link loading} and
 * {@link loadingBatch}, every other owner counter only by the transition (or, once the owner has
 * stopped, by its `refuse`, which counts a late `count` message).
 */
class OwnerPort<V> implements RunnerPort<V> {
  constructor(
    private readonly table: string,
    /** The owner's counters: this port writes only the origin-work cells. */
    private readonly counters: Float64Array,
    private readonly events: Emitter<TableEvents>,
    /** Posts a message to the owner's mailbox. */
    private readonly post: (message: Message<V>) => void,
    /** Forgets the mailbox's last miss (see `Mailbox.forgetLast`). */
    private readonly forgetLast: () => void,
  ) {}

  loading(id: Id, role: LeaseRole | undefined): void {
    const counters = this.counters
    counters[C.loads]++
    // Counted with the load it led to, so lease_acquired + lease_lost ≤ loads whatever happens to the flight.
    if (role !== undefined) counters[C[role]]++
    if (this.events.all.size > 0) emitSafely(this.events, 'load', { table: this.table, id })
  }

  loadingBatch(ids: readonly Id[], roles: readonly (LeaseRole | undefined)[] | undefined): void {
    this.counters[C.batch_loads]++
    this.counters[C.batch_ids] += ids.length
    ids.forEach((id, i) => this.loading(id, roles?.[i]))
  }

  enteringLoader(): void {
    this.forgetLast()
  }

  done(flight: Flight<V>, result: FlightResult<V>): void {
    flight.result = result
    this.post(flight)
  }

  graced(flight: Flight<V>, fallback: Fallback<V>): void {
    this.post(msg.l2Graced(flight, fallback))
  }

  refused(flight: Flight<V>): void {
    this.post(msg.l2Refused(flight))
  }
}

/** Closes the table's L2 store and bus (the `closeStores` option), both even when one fails; rejects with the first failure. */
async function closeStores({ l2, bus }: ResolvedOptions): Promise<void> {
  // Each called apart: one whose close throws at once still lets the other close.
  const results = await Promise.allSettled([l2, bus].map(async (store) => store?.close()))
  const failed = results.find((result) => result.status === 'rejected')
  if (failed !== undefined) throw failed.reason
}
