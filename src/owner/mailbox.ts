import type { Id } from '../core/id.js'
import type { Origin } from './loader.js'
import { type Message, type PlainMiss, type Refresh, msg } from './messages.js'
import type { OwnerState } from './state.js'

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
export class Mailbox<V> {
  #batch: Message<V>[] = []
  /** This turn's plain misses by id, until the batch is handed over. */
  readonly #misses = new Map<Id, PlainMiss<V>>()
  /** The last of them: a herd repeats one id, and a repeat needs no lookup. */
  #last: PlainMiss<V> | undefined = undefined
  /** This turn's stale-while-revalidate refreshes by id, until the batch is handed over. */
  readonly #refreshes = new Map<Id, Refresh<V>>()
  readonly #deliver: (messages: Message<V>[]) => void
  readonly #owner: Pick<OwnerState<V>, 'flights' | 'coalesce'>

  constructor(
    /** Hands a batch to the actor. */
    deliver: (messages: Message<V>[]) => void,
    /** The owner's state, read (never written) to join a plain miss to the id's flight. */
    owner: Pick<OwnerState<V>, 'flights' | 'coalesce'>,
  ) {
    this.#deliver = deliver
    this.#owner = owner
  }

  /**
   * A plain miss on `id`: shares this turn's message for the id when there is one, else joins the
   * id's joinable flight or asks for a new one with `loader`. With the coalescing gate off every miss
   * has a message of its own. Returns the caller's promise.
   */
  miss(id: Id, loader: Origin<V>): Promise<V | undefined> {
    // A pending miss for the id exists only while the gate is on: a gate change hands the turn over first.
    const pending = this.#misses.get(id)
    if (pending !== undefined) {
      pending.count++
      this.#last = pending
      return pending.promise
    }
    const owner = this.#owner
    const coalesce = owner.coalesce
    const message = msg.plainMiss(id, loader, coalesce ? owner.flights.joinable(id) : undefined, false)
    if (coalesce) this.#misses.set(id, (this.#last = message))
    this.post(message)
    return message.promise
  }

  /** A plain forced refresh of `id`: a message of its own (it must not share an unforced miss's flight), which the owner joins to a flight or starts one with. */
  forcedMiss(id: Id, loader: Origin<V>): Promise<V | undefined> {
    const message = msg.plainMiss(id, loader, undefined, true)
    this.post(message)
    return message.promise
  }

  /** A caller answered `id`'s graced value at once, `staleness` ms past its expiry: counts it on this turn's refresh of the id. */
  refresh(id: Id, loader: Origin<V>, staleness: number): void {
    const pending = this.#refreshes.get(id)
    if (pending !== undefined) {
      pending.count++
      return
    }
    const message = msg.refresh(id, loader, staleness)
    this.#refreshes.set(id, message)
    this.post(message)
  }

  /**
   * The herd's shortcut: when `id` is the id of this turn's last plain miss, counts one more caller
   * on it and returns its promise; otherwise `undefined`. Rows change only when a turn is handed
   * over, which forgets the last miss, so an id pending this turn has no live row: a repeat needs
   * neither the row lookup nor the miss lookup.
   */
  repeat(id: Id): Promise<V | undefined> | undefined {
    const last = this.#last
    if (last === undefined || last.id !== id) return undefined
    last.count++
    return last.promise
  }

  /** Adds `message` to this turn's batch, handed over a microtask later (or by the next {@link send}). */
  post(message: Message<V>): void {
    if (this.#batch.push(message) === 1) queueMicrotask(this.#flush)
  }

  /** Adds `message` and hands the batch over now: for timers and listeners, which run outside any turn. */
  send(message: Message<V>): void {
    this.#batch.push(message)
    this.#flush()
  }

  readonly #flush = (): void => {
    if (this.#batch.length === 0) return
    const messages = this.#batch
    this.#batch = []
    this.#misses.clear()
    this.#refreshes.clear()
    this.#last = undefined
    this.#deliver(messages)
  }
}
