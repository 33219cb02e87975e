import { type Id, isMarked } from '../core/id.js'
import { keepShape } from '../core/kept-shapes.js'
import type { Flight, SharedCallers } from '../flight/flight.js'
import type { Origin } from './loader.js'

/** A promise already settled: `then` on it queues a microtask with none of `queueMicrotask`'s per-call async-context wrapper. */
const SETTLED = Promise.resolve()

/** What the mailbox reads of the owner's state (never writes) to join a plain miss to the id's flight. */
export interface JoinView<V> {
  readonly flights: { joinable(id: Id): Flight<V> | undefined }
  readonly rows: { absence(id: Id): number }
  readonly coalesce: boolean
}

/**
 * Plain callers (no signal, no deadline) of one id that missed in one turn: they share one promise.
 * When the mailbox saw a joinable flight for the id that already has a shared promise, they hold
 * that one; otherwise the message has a promise of its own, which the owner settles (joining the
 * id's flight, answering from a row, or starting a flight with `loader`). Created and written
 * (`count`) only by the mailbox, until the turn is handed to the owner.
 */
export class PlainMiss<V> implements SharedCallers<V> {
  readonly type = 'miss'
  /** Callers sharing this message. */
  count = 1
  readonly promise: Promise<V | undefined>
  /** Settle `promise` when it is this message's own; `undefined` when the callers hold `flight`'s shared promise. */
  resolve: ((value: V | undefined | Promise<V | undefined>) => void) | undefined = undefined
  reject: ((error: unknown) => void) | undefined = undefined

  constructor(
    readonly id: Id,
    readonly loader: Origin<V>,
    /** The joinable flight the mailbox saw for the id, if any. */
    readonly flight: Flight<V> | undefined,
    /** A forced refresh (`forceRefresh`): no live row answers it, and a flight it starts takes no answer from L2. */
    readonly forced: boolean,
    /** The rows' proof, as the message was made, that the id had no row (see `RowStore.absence`); -1: none. */
    readonly absence: number,
    /**
     * The read found a row older than one of its tags: the owner counts a `tag_stale` for each caller.
     * Every caller sharing the message found the same row: rows change only when a turn is handed over,
     * and a read made while the owner processes one shares its message with no other (see `Mailbox.miss`).
     */
    readonly tagStale: boolean,
  ) {
    const shared = flight?.shared
    this.promise =
      shared !== undefined
        ? shared.promise
        : new Promise<V | undefined>((resolve, reject) => {
            this.resolve = resolve
            this.reject = reject
          })
  }
}

// A herd's every waiter reads the last miss message: its map must outlive the messages (see `kept-shapes.ts`).
keepShape(new PlainMiss<unknown>('', () => undefined, undefined, false, -1, false))

/**
 * Callers of one id in one turn who were answered its graced value at once (stale-while-revalidate):
 * the id's one refresh flight is started or joined for them, with nobody waiting on it. Written
 * (`count`) only by the mailbox until the turn is handed over.
 */
export class Refresh<V> {
  readonly type = 'refresh'
  count = 1
  constructor(
    readonly id: Id,
    readonly loader: Origin<V>,
    /** How far past its expiry the value they got was, in ms. */
    readonly staleness: number,
  ) {}
}

/**
 * The owner's mailbox batching: every message posted during one turn of the event loop is handed to
 * the actor as one `batch` event, in posting order, a microtask later (or at once, by {@link send}).
 * There is one queue: this batch is what the actor's own mailbox receives; xstate then processes
 * batches in order, one at a time.
 *
 * Plain misses (no signal, no deadline) on one id in one turn share one {@link PlainMiss} message
 * and one promise: the first creates it, the rest only count on it. A herd of N plain misses costs
 * one message and one promise.
 *
 * Written only by itself, from whoever posts (the table facade, flight runners, timers); the
 * messages it hands over are read only by the owner.
 */
export class Mailbox<V, M extends { readonly type: string }> {
  #batch: (M | PlainMiss<V> | Refresh<V>)[] = []
  /**
   * This turn's plain misses by id, until the batch is handed over. A new map each turn that used it,
   * never a cleared one: once a full GC has moved the map to the old generation, each cleared table
   * would keep its turn's misses (their promises, the flights they join) alive through the scavenges
   * that follow (see `core/young-collections.ts`).
   */
  #misses = new Map<Id, PlainMiss<V>>()
  /**
   * The last of them that is the base table's (a namespace's key, marked, never is): a herd repeats
   * one id, and a repeat needs no lookup. Forgotten when a loader is entered (see {@link repeat}) and
   * when a forced refresh of its id is posted (see {@link supersede}).
   */
  #last: PlainMiss<V> | undefined = undefined
  /**
   * True while a batch is handed to the owner: until `deliver` returns, the owner processes it (and any
   * batch sent meanwhile), writing rows, and runs its effects. A read made then (from a `sizeOf`, an
   * inspector, an event listener) may be followed, in the same processing, by a change of its id or of
   * the gate, so the mailbox decides nothing for it (see {@link miss}). Written only by `#flush`.
   */
  #delivering = false
  /**
   * The ids a forced refresh was posted for this turn, until the batch is handed over (`undefined`
   * while none was). The owner handles it before any later miss of the turn, and it supersedes the
   * id's flight there: so a later miss of the id takes no flight seen now (see {@link supersede}).
   * Written only by {@link supersede}; `#flush` drops it.
   */
  #forced: Set<Id> | undefined = undefined
  /** This turn's stale-while-revalidate refreshes by id, until the batch is handed over. A new map each turn that used it, as {@link #misses}. */
  #refreshes = new Map<Id, Refresh<V>>()
  readonly #deliver: (messages: (M | PlainMiss<V> | Refresh<V>)[]) => void
  readonly #owner: JoinView<V>

  constructor(
    /** Hands a batch to the actor. */
    deliver: (messages: (M | PlainMiss<V> | Refresh<V>)[]) => void,
    /** The owner's state, read (never written) to join a plain miss to the id's flight. */
    owner: JoinView<V>,
  ) {
    this.#deliver = deliver
    this.#owner = owner
  }

  /**
   * A plain miss on `id`: shares this turn's message for the id when there is one, else joins the
   * id's joinable flight or asks for a new one with `loader`. With the coalescing gate off every miss
   * has a message of its own. Returns the caller's promise.
   */
  miss(id: Id, loader: Origin<V>, tagStale: boolean): Promise<V | undefined> {
    // A pending miss for the id exists only while the gate is on: a gate change hands the turn over first.
    let message = this.#misses.get(id)
    if (message !== undefined) message.count++
    else {
      const owner = this.#owner
      // A read made while the owner processes a batch (see `#delivering`) is decided by the owner alone,
      // as its message is handled: the rows, the flights and the gate may change before the processing
      // ends. It joins no flight here, and its message is its own and never the last miss.
      const joining = owner.coalesce && !this.#delivering
      // A flight a forced refresh of this turn supersedes is not this miss's: the owner finds the refresh's.
      const seen = joining && this.#forced?.has(id) !== true ? owner.flights.joinable(id) : undefined
      message = new PlainMiss(id, loader, seen, false, owner.rows.absence(id), tagStale)
      this.post(message)
      if (!joining) return message.promise // with the gate off, a message of its own and no last miss, too
      this.#misses.set(id, message)
    }
    // The base table's only: a namespace's key (marked) never becomes the last miss (see `repeat`).
    this.#last = isMarked(id) ? undefined : message
    return message.promise
  }

  /** A plain forced refresh of `id`: a message of its own (it must not share an unforced miss's flight), which the owner joins to a flight or starts one with. */
  forcedMiss(id: Id, loader: Origin<V>): Promise<V | undefined> {
    const message = new PlainMiss(id, loader, undefined, true, -1, false)
    this.supersede(id)
    this.post(message)
    return message.promise
  }

  /**
   * A forced refresh of `id` is posted now (plain, or with options): it supersedes the id's flight
   * when the owner handles it, so a plain miss made after it in this turn shares no miss made before
   * it, and takes no flight seen before the owner handled it (see {@link miss}).
   */
  supersede(id: Id): void {
    this.#misses.delete(id)
    if (this.#last?.id === id) this.#last = undefined
    ;(this.#forced ??= new Set()).add(id)
  }

  /** A caller answered `id`'s graced value at once, `staleness` ms past its expiry: counts it on this turn's refresh of the id. */
  refresh(id: Id, loader: Origin<V>, staleness: number): void {
    const pending = this.#refreshes.get(id)
    if (pending !== undefined) {
      pending.count++
      return
    }
    const message = new Refresh(id, loader, staleness)
    this.#refreshes.set(id, message)
    this.post(message)
  }

  /**
   * The herd's shortcut, for reads of the base table: when `id` is the id of this turn's last plain
   * miss of the base table, counts one more caller on it and returns its promise; otherwise `undefined`
   * (a marked id, which the base table refuses, never matches). Rows change only when a turn is handed
   * over, which forgets the last miss, and a read made while the owner processes a batch never becomes
   * it (see `#delivering`), so an id pending this turn has no live row: a repeat needs
   * neither the row lookup nor the miss lookup. Entering a loader forgets it too ({@link forgetLast}),
   * and a fetch from inside a loader of its own id is refused before it could become a miss: so no
   * repeat is ever a loader's fetch of its own id, and a herd's waiter needs no check for that.
   */
  repeat(id: Id): Promise<V | undefined> | undefined {
    const last = this.#last
    if (last === undefined || last.id !== id) return undefined
    last.count++
    return last.promise
  }

  /** A loader's synchronous part starts now: the last miss is forgotten (see {@link repeat}); a later miss of the turn still finds its message. */
  forgetLast(): void {
    this.#last = undefined
  }

  /** Adds `message` to this turn's batch, handed over a microtask later (or by the next {@link send}). */
  post(message: M | PlainMiss<V> | Refresh<V>): void {
    if (this.#batch.push(message) === 1) void SETTLED.then(this.#flush)
  }

  /** Adds `message` and hands the batch over now: for timers and listeners, which run outside any turn. */
  send(message: M | PlainMiss<V> | Refresh<V>): void {
    this.#batch.push(message)
    this.#flush()
  }

  readonly #flush = (): void => {
    if (this.#batch.length === 0) return
    const messages = this.#batch
    this.#batch = []
    if (this.#misses.size > 0) this.#misses = new Map()
    if (this.#refreshes.size > 0) this.#refreshes = new Map()
    this.#forced = undefined
    this.#last = undefined
    const outer = this.#delivering // a batch sent while one is processed is queued by the actor: `deliver` returns at once
    this.#delivering = true
    try {
      this.#deliver(messages)
    } finally {
      this.#delivering = outer
    }
  }
}
