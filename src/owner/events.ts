import type { Id } from '../id.js'
import type { Flight, FlightResult, Loader } from './flight.js'
import type { Waiter } from './waiter.js'

/** A fetch found no live row: join the id's flight or start one. */
export interface MissEvent<V> { type: 'miss'; id: Id; loader: Loader<V>; waiter: Waiter<V> }
/** A flight's load finished (successfully or not). */
export interface FlightDoneEvent<V> { type: 'flight.done'; flight: Flight<V>; result: FlightResult<V> }
/** A flight's `loadTimeout` passed. */
export interface FlightTimeoutEvent<V> { type: 'flight.timeout'; flight: Flight<V> }
/** A waiter left before its flight answered: its deadline passed, or its signal aborted. */
export interface WaiterLeftEvent<V> { type: 'waiter.left'; waiter: Waiter<V>; reason: 'timeout' | 'cancel'; error: unknown }
/** Write a row (`table.put`). */
export interface PutEvent<V> { type: 'put'; id: Id; value: V | undefined }
/** Drop a row (`table.invalidate`). */
export interface InvalidateEvent { type: 'invalidate'; id: Id }
/** Sweeper tick (or the continuation of one): reclaim rows whose expiry has passed. */
export interface SweepEvent { type: 'sweep'; now: number; first: boolean }
/** Turn the coalescing gate on or off. */
export interface GateEvent { type: 'gate'; on: boolean }
/** Refuse new work; stop once every flight has answered. */
export interface CloseEvent { type: 'close' }

/** Every message the owner accepts. */
export type OwnerEvent<V> =
  | MissEvent<V>
  | FlightDoneEvent<V>
  | FlightTimeoutEvent<V>
  | WaiterLeftEvent<V>
  | PutEvent<V>
  | InvalidateEvent
  | SweepEvent
  | GateEvent
  | CloseEvent

/** Constructors, so messages are built in one place. */
export const ev = {
  miss: <V>(id: Id, loader: Loader<V>, waiter: Waiter<V>): MissEvent<V> => ({ type: 'miss', id, loader, waiter }),
  flightDone: <V>(flight: Flight<V>, result: FlightResult<V>): FlightDoneEvent<V> => ({ type: 'flight.done', flight, result }),
  flightTimeout: <V>(flight: Flight<V>): FlightTimeoutEvent<V> => ({ type: 'flight.timeout', flight }),
  waiterLeft: <V>(waiter: Waiter<V>, reason: 'timeout' | 'cancel', error: unknown): WaiterLeftEvent<V> => ({ type: 'waiter.left', waiter, reason, error }),
  put: <V>(id: Id, value: V | undefined): PutEvent<V> => ({ type: 'put', id, value }),
  invalidate: (id: Id): InvalidateEvent => ({ type: 'invalidate', id }),
  sweep: (now: number, first: boolean): SweepEvent => ({ type: 'sweep', now, first }),
  gate: (on: boolean): GateEvent => ({ type: 'gate', on }),
  close: (): CloseEvent => ({ type: 'close' }),
}
