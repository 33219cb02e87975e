import type { CoherenceMessage } from '../bus/bus.js'
import type { Id } from '../id.js'
import type { Flight, FlightResult, Loader } from './flight.js'
import type { Waiter } from './waiter.js'

/**
 * A fetch found no live row: join the id's flight or start one. `waiter` is the caller's own when it
 * has a signal or a deadline; a plain caller has none: the owner sets `flight` to the flight it
 * joined or started, and the caller takes that flight's shared promise.
 */
export interface MissEvent<V> { type: 'miss'; id: Id; loader: Loader<V>; waiter: Waiter<V> | undefined; flight: Flight<V> | undefined }
/**
 * Plain callers joined `flight`, which they saw in the flights map, and already hold its shared
 * promise; `flight.joined - flight.joinsCounted` says how many. One message per flight per batch.
 */
export interface JoinEvent<V> { type: 'join'; flight: Flight<V> }
/** A flight's load finished (successfully or not). */
export interface FlightDoneEvent<V> { type: 'flight.done'; flight: Flight<V>; result: FlightResult<V> }
/** L2 refused a flight's write-back: it holds a newer version, so the row the flight stored must go. */
export interface L2RefusedEvent<V> { type: 'l2.refused'; flight: Flight<V> }
/** The earliest `loadTimeout` deadline may have passed. */
export interface DeadlineEvent { type: 'deadline' }
/** Messages posted in one turn of the event loop, processed in order. */
export interface BatchEvent<V> { type: 'batch'; events: OwnerEvent<V>[] }
/** A waiter left before its flight answered: its deadline passed, or its signal aborted. */
export interface WaiterLeftEvent<V> { type: 'waiter.left'; waiter: Waiter<V>; reason: 'timeout' | 'cancel'; error: unknown }
/** How the owner answers a local put or invalidate: whether L1 changed, and the version it used. */
export type ChangeReply = (applied: boolean, version: number) => void
/** Write a row (`table.put`); `version` undefined: the next version after the highest known. */
export interface PutEvent<V> {
  type: 'put'
  id: Id
  value: V | undefined
  expiresAt: number | undefined
  version: number | undefined
  /** L2's version guard refused the write: L2 holds something newer. */
  refused: boolean
  reply: ChangeReply
}
/** Drop a row and leave a tombstone (`table.invalidate`); `version` undefined: the next version. */
export interface InvalidateEvent { type: 'invalidate'; id: Id; version: number | undefined; reply: ChangeReply }
/** A coherence message from another table instance. */
export interface CoherenceEvent { type: 'coherence'; message: CoherenceMessage }
/** The bus may have lost messages: drop every L1 row. */
export interface GapEvent { type: 'gap' }
/** Sweeper tick (or the continuation of one): reclaim rows whose expiry has passed. */
export interface SweepEvent { type: 'sweep'; now: number; first: boolean }
/** Turn the coalescing gate on or off. */
export interface GateEvent { type: 'gate'; on: boolean }
/** Refuse new work; stop once every flight has answered. */
export interface CloseEvent { type: 'close' }

/** Every message the owner accepts. */
export type OwnerEvent<V> =
  | MissEvent<V>
  | JoinEvent<V>
  | FlightDoneEvent<V>
  | L2RefusedEvent<V>
  | DeadlineEvent
  | BatchEvent<V>
  | WaiterLeftEvent<V>
  | PutEvent<V>
  | InvalidateEvent
  | CoherenceEvent
  | GapEvent
  | SweepEvent
  | GateEvent
  | CloseEvent

/** Constructors, so messages are built in one place. */
export const ev = {
  miss: <V>(id: Id, loader: Loader<V>, waiter: Waiter<V> | undefined): MissEvent<V> => ({ type: 'miss', id, loader, waiter, flight: undefined }),
  join: <V>(flight: Flight<V>): JoinEvent<V> => ({ type: 'join', flight }),
  flightDone: <V>(flight: Flight<V>, result: FlightResult<V>): FlightDoneEvent<V> => ({ type: 'flight.done', flight, result }),
  l2Refused: <V>(flight: Flight<V>): L2RefusedEvent<V> => ({ type: 'l2.refused', flight }),
  deadline: (): DeadlineEvent => ({ type: 'deadline' }),
  batch: <V>(events: OwnerEvent<V>[]): BatchEvent<V> => ({ type: 'batch', events }),
  waiterLeft: <V>(waiter: Waiter<V>, reason: 'timeout' | 'cancel', error: unknown): WaiterLeftEvent<V> => ({
    type: 'waiter.left',
    waiter,
    reason,
    error,
  }),
  put: <V>(id: Id, value: V | undefined, expiresAt: number | undefined, version: number | undefined, refused: boolean, reply: ChangeReply): PutEvent<V> => ({
    type: 'put',
    id,
    value,
    expiresAt,
    version,
    refused,
    reply,
  }),
  invalidate: (id: Id, version: number | undefined, reply: ChangeReply): InvalidateEvent => ({ type: 'invalidate', id, version, reply }),
  coherence: (message: CoherenceMessage): CoherenceEvent => ({ type: 'coherence', message }),
  gap: (): GapEvent => ({ type: 'gap' }),
  sweep: (now: number, first: boolean): SweepEvent => ({ type: 'sweep', now, first }),
  gate: (on: boolean): GateEvent => ({ type: 'gate', on }),
  close: (): CloseEvent => ({ type: 'close' }),
}
