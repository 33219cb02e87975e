/**
 * The owner's messages. Each is posted to the owner's mailbox, which hands everything posted in one
 * turn of the event loop to the actor as one `batch` event (see `mailbox.ts`).
 */
import type { BusDelivery } from '../bus/bus.js'
import type { OwnerCounterName } from '../core/counters.js'
import type { FetchTrace } from '../core/fetch-trace.js'
import type { Id } from '../core/id.js'
import type { Fallback, Flight } from '../flight/flight.js'
import type { PlainMiss, Refresh } from './mailbox.js'
import type { Origin } from './loader.js'
import type { Waiter } from '../flight/waiter.js'
import type { RowTags, Scope } from '../tags/scope.js'

/**
 * One put in progress (`table.put`, from before it asks L2 until the owner handled its outcome): made
 * by the change path, which posts it to the owner; `fencedAt` written only by the owner's transition.
 */
export interface PutInProgress {
  readonly id: Id
  /**
   * The highest version of a change of `id` heard from another process, or made here, while the put
   * was in progress (+∞ for a clear or a bus gap); -1 when none: the put is applied to L1 only above
   * it. Written by the owner.
   */
  fencedAt: number
  /**
   * The birth of its row on the tag version clock, taken by the change path as the put begins (before
   * it asks L2 anything); +∞ for a put without tags: the sweeper forgets no tag version this birth may
   * still be judged against.
   */
  born: number
}

/** A waiting caller's own options. */
export interface WaitOptions {
  signal: AbortSignal | undefined
  timeout: number | undefined
  /** Ms after which this caller takes the graced value, if there is one. */
  softTimeout: number | undefined
  /** A forced refresh (see {@link PlainMiss.forced}). */
  forced: boolean
  /** The caller's record for `echostore:fetch`, when it is traced: the owner writes how it placed and answered the caller. */
  trace?: FetchTrace | undefined
}

/** A caller with a signal, a deadline or a soft timeout of its own: it gets a promise of its own and may leave early. */
export interface WaitMessage<V> extends WaitOptions {
  type: 'wait'
  id: Id
  loader: Origin<V>
  resolve(value: V | undefined): void
  reject(error: unknown): void
}

/** Something outside the owner happened that a counter counts (an L2 outcome, a lease outcome, an already-aborted fetch, a failed broadcast). */
export interface CountMessage {
  type: 'count'
  counter: OwnerCounterName
}
/** L2 refused a flight's write-back: it holds a newer version, so the row the flight stored must go. */
export interface L2RefusedMessage<V> {
  type: 'l2.refused'
  flight: Flight<V>
}
/** The earliest flight deadline (`env.flightBound` after its start) may have passed. */
export interface DeadlineMessage {
  type: 'deadline'
}
/** A waiter left before its flight answered: its deadline passed or its signal aborted; or its soft timeout passed, which answers it from a graced value if there is one. */
export interface WaiterLeftMessage<V> {
  type: 'waiter.left'
  waiter: Waiter<V>
  reason: WaiterLeaving
}
/** Why a waiter leaves: its deadline, its signal, its soft timeout, or a signal that could not be listened to (`refused`, with what it threw). */
export type WaiterLeaving = 'timeout' | 'cancel' | 'soft' | { refused: unknown }
/** A flight's runner found a graced value in L2 (`fallback`): the soft timeouts may answer it. */
export interface L2GracedMessage<V> {
  type: 'l2.graced'
  flight: Flight<V>
  fallback: Fallback<V>
}
/** A flight's soft timeout passed: its waiters take the graced value, if there is one. */
export interface SoftTimeoutMessage<V> {
  type: 'soft'
  flight: Flight<V>
}
/** How the owner answers a local put or invalidate: whether L1 changed, and the version it used. */
export type ChangeReply = (applied: boolean, version: number) => void
/** Write a row (`table.put`) carrying `version`. */
export interface PutMessage<V> {
  type: 'put'
  id: Id
  value: V | undefined
  expiresAt: number | undefined
  version: number
  /** L2's version guard refused the write: L2 holds something newer. */
  refused: boolean
  /** The L2 write failed: L2 may still hold an older entry of the id (see `OwnerState.missedByL2`). */
  missedByL2: boolean
  /** The row's tag keys and birth, when it has tags (or is in a namespace). */
  tags: RowTags | undefined
  /** The put's progress: a change heard while it was in progress fences it. */
  progress: PutInProgress
  reply: ChangeReply
}
/** A put began (before it asks L2) or ended (`began` false): while it is in progress, a change of its id heard fences it. */
export interface PutProgressMessage {
  type: 'put.progress'
  put: PutInProgress
  began: boolean
}
/**
 * Tag keys got new versions (`table.invalidateTags`, a namespace's `clear()`, here or heard on the
 * bus): rows carrying one of them from before are stale, and every flight in `scope` is fenced.
 * `reply(true)` once done; a stopped owner answers `reply(false)`. `taken`: L2's tag versions hold
 * `versions` (L2 minted them: an invalidation made here that L2 took).
 */
export interface TagsMessage {
  type: 'tags'
  keys: readonly string[]
  versions: readonly number[]
  taken: boolean
  scope: Scope
  reply: ((applied: boolean) => void) | undefined
}
/** Drop a row and leave a tombstone carrying `version` (`table.invalidate`). */
export interface InvalidateMessage {
  type: 'invalidate'
  id: Id
  version: number
  /** The L2 write failed: L2 may still hold an older entry of the id (see `OwnerState.missedByL2`). */
  missedByL2: boolean
  reply: ChangeReply
}
/** Drop every row and fence every flight (`table.clear()`); `reply` once done. */
export interface ClearRowsMessage {
  type: 'clear'
  /** The table's L2 moved to a new generation (`l2: 'cleared'`). */
  l2Moved: boolean
  reply: () => void
}
/** Fence every flight in progress (`table.clear()`, before L2 moves: none of them may write into the next generation); `reply` once done. */
export interface FenceAllMessage {
  type: 'fence'
  reply: () => void
}
/** What the bus delivered: a coherence message, a gap, or something malformed. Validated by the owner. */
export interface DeliveryMessage {
  type: 'delivery'
  delivery: unknown
}
/** A sweeper tick (`tick`), or the next slice of a pass in progress. */
export interface SweepMessage {
  type: 'sweep'
  tick: boolean
}
/** Turn the coalescing gate on or off. */
export interface GateMessage {
  type: 'gate'
  on: boolean
}
/** The table was closed (the refusing is done by the owner's closing flag): stop the sweeper; the owner stops once every flight has answered. */
export interface CloseMessage {
  type: 'close'
}

/** Every message the owner accepts. */
export type Message<V> =
  | PlainMiss<V>
  | WaitMessage<V>
  | Refresh<V>
  | SoftTimeoutMessage<V>
  | L2GracedMessage<V>
  | CountMessage
  | Flight<V>
  | L2RefusedMessage<V>
  | DeadlineMessage
  | WaiterLeftMessage<V>
  | PutMessage<V>
  | PutProgressMessage
  | InvalidateMessage
  | TagsMessage
  | ClearRowsMessage
  | FenceAllMessage
  | DeliveryMessage
  | SweepMessage
  | GateMessage
  | CloseMessage

/** The one event the actor receives: every message posted in one turn, in the order they were posted. */
export interface BatchEvent<V> {
  type: 'batch'
  messages: Message<V>[]
}

/** Constructors, so messages are built in one place. */
export const msg = {
  wait: <V>(id: Id, loader: Origin<V>, options: WaitOptions, resolve: (value: V | undefined) => void, reject: (error: unknown) => void): WaitMessage<V> => ({
    type: 'wait',
    id,
    loader,
    ...options,
    resolve,
    reject,
  }),
  count: (counter: OwnerCounterName): CountMessage => ({ type: 'count', counter }),
  l2Refused: <V>(flight: Flight<V>): L2RefusedMessage<V> => ({ type: 'l2.refused', flight }),
  deadline: (): DeadlineMessage => ({ type: 'deadline' }),
  waiterLeft: <V>(waiter: Waiter<V>, reason: WaiterLeaving): WaiterLeftMessage<V> => ({ type: 'waiter.left', waiter, reason }),
  soft: <V>(flight: Flight<V>): SoftTimeoutMessage<V> => ({ type: 'soft', flight }),
  l2Graced: <V>(flight: Flight<V>, fallback: Fallback<V>): L2GracedMessage<V> => ({ type: 'l2.graced', flight, fallback }),
  put: <V>(
    id: Id,
    value: V | undefined,
    expiresAt: number | undefined,
    version: number,
    refused: boolean,
    missedByL2: boolean,
    tags: RowTags | undefined,
    progress: PutInProgress,
    reply: ChangeReply,
  ): PutMessage<V> => ({
    type: 'put',
    id,
    value,
    expiresAt,
    version,
    refused,
    missedByL2,
    tags,
    progress,
    reply,
  }),
  putProgress: (put: PutInProgress, began: boolean): PutProgressMessage => ({ type: 'put.progress', put, began }),
  tags: (keys: readonly string[], versions: readonly number[], taken: boolean, scope: Scope, reply?: (applied: boolean) => void): TagsMessage => ({
    type: 'tags',
    keys,
    versions,
    taken,
    scope,
    reply,
  }),
  invalidate: (id: Id, version: number, missedByL2: boolean, reply: ChangeReply): InvalidateMessage => ({ type: 'invalidate', id, version, missedByL2, reply }),
  clear: (l2Moved: boolean, reply: () => void): ClearRowsMessage => ({ type: 'clear', l2Moved, reply }),
  fence: (reply: () => void): FenceAllMessage => ({ type: 'fence', reply }),
  delivery: (delivery: BusDelivery | unknown): DeliveryMessage => ({ type: 'delivery', delivery }),
  sweep: (tick: boolean): SweepMessage => ({ type: 'sweep', tick }),
  gate: (on: boolean): GateMessage => ({ type: 'gate', on }),
  close: (): CloseMessage => ({ type: 'close' }),
}

/**
 * Answers the callers a message carries, when nobody else will: the owner stopped before it (`error`
 * the refusal of the message's id, see `owner.ts`), or its handler threw (the error it threw). A
 * caller gets `error`; a change is not applied; a clear or a fence is done with; a flight's callers
 * still waiting get `error`. Nothing is left pending. Messages with no caller (counts, timers, the
 * other runner reports) need no answer.
 */
export function answerUnhandled<V>(message: Message<V>, error: (id: Id) => unknown): void {
  switch (message.type) {
    case 'miss':
      // Callers holding a flight's shared promise are answered by that flight.
      return (message.reject ?? message.flight?.shared?.reject)?.(error(message.id))
    case 'wait':
      return message.reject(error(message.id))
    case 'flight.done':
      // Its callers still waiting get the error; a flight already answered keeps its answer.
      if (message.answered === undefined) message.answer({ ok: false, error: error(message.id) })
      return
    case 'put':
    case 'invalidate':
      return message.reply(false, message.version)
    case 'tags':
      return message.reply?.(false)
    case 'clear':
    case 'fence':
      return message.reply()
  }
}
