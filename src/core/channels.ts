/**
 * The `diagnostics_channel` channels EchoStore publishes on, for tracers and other observers:
 * tracing channels `echostore:fetch`, `echostore:load` and `echostore:l2`, and the plain channel
 * `echostore:bus`. Nothing is built or published while a channel has no subscriber: every
 * publishing site asks {@link observed} (or `hasSubscribers`) first.
 */
import { type TracingChannel, channel, tracingChannel } from 'node:diagnostics_channel'
import type { CoherenceMessage } from '../bus/bus.js'
import type { Id } from './id.js'

/** How one fetch was answered: a live row (`hit`), a negative row (`negative`), the flight this caller started (`miss`), one it joined (`coalesced`), a graced value (`stale`), or an error. */
export type FetchOutcome = 'hit' | 'negative' | 'miss' | 'coalesced' | 'stale' | 'error'

/**
 * The context of `echostore:fetch`: the table and the id (or ids, for a batch read); `outcome` once it
 * resolved, and `stale` when some of its answers were graced values (how many: a batch read's ids
 * one by one), and `result` or `error` as Node's tracing channels set them.
 */
export interface FetchChannelContext {
  table: string
  id?: Id
  ids?: readonly Id[]
  outcome?: FetchOutcome
  stale?: number
  result?: unknown
  error?: unknown
}

/** The context of `echostore:load`, around every loader call: the table and the id (or ids, for a batch loader); then `result` or `error`. */
export interface LoadChannelContext {
  table: string
  id?: Id
  ids?: readonly Id[]
  result?: unknown
  error?: unknown
}

/** An L2 operation as `echostore:l2` names it. */
export type L2Op =
  | 'get'
  | 'getMany'
  | 'set'
  | 'nextVersion'
  | 'clear'
  | 'tagVersions'
  | 'invalidateTags'
  | 'leases.acquire'
  | 'leases.acquireMany'
  | 'leases.readOrAcquire'
  | 'leases.setAndRelease'
  | 'leases.holder'
  | 'leases.release'
  | 'leases.void'

/** The context of `echostore:l2`, around every L2 call a table makes: the table, the operation and, for Redis, the server's `host:port`; then `result` or `error` (a failure or a timeout). */
export interface L2ChannelContext {
  table: string
  op: L2Op
  address?: string
  result?: unknown
  error?: unknown
}

/** What happened on the bus, as `echostore:bus` tells it. */
export type BusEventType = 'published' | 'received' | 'refused' | 'gap'

/**
 * A message of `echostore:bus`: a message this table `published` (the bus took it), one it
 * `received` from another instance (applied, or a lease holder's fill), one it `refused` (`reason`:
 * `invalid`, malformed; `stale`, older than what the table knows), or a `gap` the bus reported.
 */
export interface BusChannelMessage {
  table: string
  type: BusEventType
  message?: CoherenceMessage
  reason?: 'invalid' | 'stale'
}

/** `echostore:fetch`: around every `fetch` (and batch read). */
export const fetchChannel: TracingChannel<unknown, FetchChannelContext> = tracingChannel('echostore:fetch')
/** `echostore:load`: around every loader (and batch loader) call. */
export const loadChannel: TracingChannel<unknown, LoadChannelContext> = tracingChannel('echostore:load')
/** `echostore:l2`: around every L2 operation. */
export const l2Channel: TracingChannel<unknown, L2ChannelContext> = tracingChannel('echostore:l2')
/** `echostore:bus`: every message published, received or refused, and every gap. */
export const busChannel = channel('echostore:bus')

/** True when any of a tracing channel's five channels has a subscriber (or a bound store). */
export function observed(traced: TracingChannel<unknown, object>): boolean {
  return traced.start.hasSubscribers || traced.end.hasSubscribers || traced.asyncStart.hasSubscribers || traced.asyncEnd.hasSubscribers || traced.error.hasSubscribers
}

/** Whether a tracing channel is watched now: read on every fetch and every load. */
export interface Watched {
  readonly hasSubscribers: boolean
}

/**
 * `traced` itself where the runtime's tracing channels answer `hasSubscribers` (Node ≥ 20.13 and
 * 22): a hot path reads that getter, which runs none of this module's code; elsewhere a stand-in
 * whose getter asks {@link observed}. Same answer either way.
 */
function watched(traced: TracingChannel<unknown, object>): Watched {
  const native = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(traced), 'hasSubscribers')?.get
  return typeof native === 'function'
    ? traced
    : {
        get hasSubscribers() {
          return observed(traced)
        },
      }
}

/** Whether `echostore:fetch` is watched now (see {@link watched}). */
export const fetchWatched: Watched = watched(fetchChannel)
/** Whether `echostore:load` is watched now (see {@link watched}). */
export const loadWatched: Watched = watched(loadChannel)

/**
 * Runs `call` as one traced operation on `traced` with `context`: `start` (with `call` inside its
 * bound stores), `end` after its synchronous part; the returned `settle` publishes `error` (when
 * `failed`), `asyncStart` and `asyncEnd` once, with `result` or `error` set on the context. `call`
 * must not throw.
 */
export function begin<C extends object, T>(traced: TracingChannel<unknown, C>, context: C, call: () => T): T {
  try {
    return traced.start.runStores(context, call)
  } finally {
    traced.end.publish(context)
  }
}

/** Ends a traced operation begun with {@link begin}: `error` when it failed, then `asyncStart` and `asyncEnd`. */
export function settle<C extends { result?: unknown; error?: unknown }>(traced: TracingChannel<unknown, C>, context: C, failed: boolean, answer: unknown): void {
  if (failed) {
    context.error = answer
    traced.error.publish(context)
  } else {
    context.result = answer
  }
  traced.asyncStart.publish(context)
  traced.asyncEnd.publish(context)
}

/**
 * Runs a loader call (`call`, which may throw or return a value or a promise) under
 * `echostore:load`, for a single id or a batch (`ids`); without a subscriber, just calls it.
 */
export function traceLoad<T>(table: string, ids: { id: Id } | { ids: readonly Id[] }, call: () => T | PromiseLike<T>): T | PromiseLike<T> {
  if (!observed(loadChannel)) return call()
  const context: LoadChannelContext = { table, ...ids }
  return begin(loadChannel, context, () => {
    let pending: Promise<T>
    try {
      pending = Promise.resolve(call())
    } catch (error) {
      pending = Promise.reject(error)
    }
    return pending.then(
      (value) => (settle(loadChannel, context, false, value), value),
      (error: unknown) => {
        settle(loadChannel, context, true, error)
        throw error
      },
    )
  })
}

/**
 * Begins one L2 call under `echostore:l2`; returns what ends it (`failed` with the error, or the
 * store's answer), or `undefined` without a subscriber.
 */
export function traceL2(table: string, op: L2Op, address: string | undefined): ((failed: boolean, answer: unknown) => void) | undefined {
  if (!observed(l2Channel)) return undefined
  const context: L2ChannelContext = address === undefined ? { table, op } : { table, op, address }
  begin(l2Channel, context, () => undefined)
  return (failed, answer) => settle(l2Channel, context, failed, answer)
}

/** Publishes one bus event on `echostore:bus`, when someone listens. */
export function busEvent(table: string, type: BusEventType, message?: CoherenceMessage, reason?: 'invalid' | 'stale'): void {
  if (!busChannel.hasSubscribers) return
  const event: BusChannelMessage = { table, type }
  if (message !== undefined) event.message = message
  if (reason !== undefined) event.reason = reason
  busChannel.publish(event)
}
