/**
 * The coherence bus on Redis pub/sub: tables in several processes sharing one channel.
 *
 * Messages are published through a normal connection (the client you give, or one the bus opens
 * from `url`) and received on a dedicated subscriber connection (`client.duplicate()`, or a second
 * connection from `url`), in the wire format of `../bus/message.ts`. Every payload received goes
 * through `decodeWire`: a valid one is delivered as `{ type: 'message' }` (one frozen object
 * shared by every handler), anything else as `{ type: 'invalid', reason }`.
 *
 * Pub/sub is at-most-once. When the subscriber connection drops and comes back, the bus
 * subscribes again (ioredis also does so itself, `autoResubscribe` being on by default), waits for
 * Redis to confirm, and only then delivers `{ type: 'gap' }` to every handler: messages published
 * while it was away are lost, and every message published after the gap is heard. The first
 * subscription is not a gap; await `subscribed()` to know when the bus is listening.
 *
 * Handlers run synchronously, in subscription order, as each payload arrives; a handler that
 * throws does not stop the others (its error goes to `onHandlerError`, or is dropped).
 * Connection errors of the connections the bus opened go to `onError` (or are dropped), so an
 * outage never crashes the process; ioredis keeps reconnecting meanwhile.
 */
import type { Redis } from 'ioredis'
import { ioredis } from './ioredis.js'
import { BusClosedError, badArgument, describe } from '../core/errors.js'
import { FAIL_FAST } from './connection.js'
import type { Bus, BusDelivery, CoherenceMessage } from '../bus/bus.js'
import { decodeWire, encodeWire, publishable } from '../bus/message.js'

/** The channel used when none is given. */
export const DEFAULT_CHANNEL = 'echostore:coherence'

/** Options of `redisBus`: exactly one of `client` or `url`. */
export interface RedisBusOptions {
  /** A connection to publish through; left open by `close()`. The subscriber is its `duplicate()`. */
  client?: Redis
  /** A Redis URL; the bus opens (and closes) its own publisher and subscriber connections. */
  url?: string
  /** The pub/sub channel every process of the deployment shares. Default `DEFAULT_CHANNEL`. */
  channel?: string
  /** Receives what a subscriber threw, with the delivery it was handling. Default: dropped. */
  onHandlerError?: (error: unknown, delivery: BusDelivery) => void
  /** Receives connection and resubscription errors of the connections the bus opened. Default: dropped. */
  onError?: (error: unknown) => void
}

/** A Redis bus: the `Bus` contract plus a way to wait until it is listening. */
export interface RedisBus extends Bus {
  /**
   * Resolves once Redis has confirmed the first subscription to the channel; rejects (code
   * `ECHOSTORE_BUS_CLOSED`) if the bus is closed before that. Messages published earlier are not heard.
   */
  subscribed(): Promise<void>
  /** `await using` support: the same as `close()`. */
  [Symbol.asyncDispose](): Promise<void>
}

type Handler = (delivery: BusDelivery) => void

const GAP: BusDelivery = Object.freeze({ type: 'gap' })

/**
 * Creates a Redis pub/sub bus. Throws a `TypeError` naming the option when not exactly one of
 * `client` / `url` is given or an option has the wrong type. `publish` rejects with a `TypeError`
 * for a malformed message, and with code `ECHOSTORE_BUS_CLOSED` after `close()`; it resolves once Redis
 * has accepted the message. `close()` unsubscribes and quits the connections the bus opened
 * (dropping at once those that are not up); a publish still unanswered when it finishes (queued
 * during an outage) rejects with code `ECHOSTORE_BUS_CLOSED`.
 */
export function redisBus(options: RedisBusOptions): RedisBus {
  const { client, url, channel = DEFAULT_CHANNEL, onHandlerError, onError } = validate(options)
  const ownsPublisher = client === undefined
  const publisher = client ?? new ioredis.Redis(url as string, FAIL_FAST)
  const subscriber = client !== undefined ? client.duplicate() : new ioredis.Redis(url as string, FAIL_FAST)
  const channelBytes = Buffer.from(channel)

  // Written by subscribe, unsubscribe and close; delivery iterates a snapshot.
  const handlers = new Set<{ handler: Handler; active: boolean }>()
  let closed = false
  let closing: Promise<void> | undefined
  // Written by the subscriber's event listeners only.
  let confirmedOnce = false
  let lostSinceConfirmed = false

  let resolveSubscribed!: () => void
  let rejectSubscribed!: (error: Error) => void
  const firstSubscription = new Promise<void>((resolve, reject) => {
    resolveSubscribed = resolve
    rejectSubscribed = reject
  })
  firstSubscription.catch(() => {})
  // Publishes Redis has not answered yet, by their reject function: close() rejects those still
  // here once it has shut the connections down, because ioredis never settles a command waiting in
  // the offline queue of a connection dropped while reconnecting. Written by publish and close.
  const unanswered = new Set<(error: Error) => void>()

  const report = (error: unknown): void => {
    if (onError === undefined) return
    try {
      onError(error)
    } catch {
      // A failing reporter must not crash the connection's event loop.
    }
  }

  const deliver = (delivery: BusDelivery): void => {
    for (const entry of [...handlers]) {
      if (closed) return
      if (!entry.active) continue
      try {
        entry.handler(delivery)
      } catch (error) {
        if (onHandlerError === undefined) continue
        try {
          onHandlerError(error, delivery)
        } catch {
          // The error reporter itself failed; the other subscribers still get the delivery.
        }
      }
    }
  }

  const onPayload = (from: Buffer, payload: Buffer): void => {
    if (closed || !from.equals(channelBytes)) return
    const decoded = decodeWire(payload)
    deliver(
      decoded.ok
        ? Object.freeze({ type: 'message', message: Object.freeze(decoded.message) })
        : Object.freeze({ type: 'invalid', reason: decoded.reason }),
    )
  }

  // Subscribe on every (re)connection and wait for Redis to confirm before announcing a gap,
  // so that every message published after the gap is heard.
  const onReady = (): void => {
    if (closed) return
    subscriber.subscribe(channel).then(
      () => {
        if (closed) return
        if (!confirmedOnce) {
          confirmedOnce = true
          resolveSubscribed()
        } else if (lostSinceConfirmed) {
          lostSinceConfirmed = false
          deliver(GAP)
        }
      },
      (error: unknown) => report(error),
    )
  }
  const onClose = (): void => {
    if (confirmedOnce) lostSinceConfirmed = true
  }

  subscriber.on('error', report)
  subscriber.on('ready', onReady)
  subscriber.on('close', onClose)
  subscriber.on('messageBuffer', onPayload)
  if (ownsPublisher) publisher.on('error', report)
  // A lazy client duplicates into a lazy subscriber: connect it now, so it starts listening.
  if (subscriber.status === 'wait') subscriber.connect().catch(report)

  return {
    /** `await using` support: the same as `close()`. */
    [Symbol.asyncDispose](): Promise<void> {
      return this.close()
    },
    async publish(message: CoherenceMessage): Promise<void> {
      if (closed) throw new BusClosedError('redisBus', 'publish refused')
      const sent = publisher.publish(channel, encodeWire(publishable('redisBus', message)))
      await new Promise<void>((resolve, reject) => {
        unanswered.add(reject)
        sent.then(
          () => (unanswered.delete(reject), resolve()),
          (error: unknown) => (unanswered.delete(reject), reject(error)),
        )
      })
    },

    subscribe(handler: Handler): () => void {
      if (typeof handler !== 'function') throw badArgument(TypeError, `redisBus.subscribe: handler must be a function, got ${typeof handler}`)
      if (closed) return () => {}
      // One entry per subscription, so subscribing one function twice means two subscriptions.
      const entry = { handler, active: true }
      handlers.add(entry)
      return () => {
        entry.active = false
        handlers.delete(entry)
      }
    },

    subscribed(): Promise<void> {
      return firstSubscription
    },

    close(): Promise<void> {
      if (closing !== undefined) return closing
      closed = true
      handlers.clear()
      rejectSubscribed(new BusClosedError('redisBus', 'it closed before its subscription was confirmed'))
      subscriber.off('ready', onReady)
      subscriber.off('close', onClose)
      subscriber.off('messageBuffer', onPayload)
      // The 'error' listeners stay: a connection failing while it closes must not crash the process.
      closing = (async () => {
        await shutdown(subscriber, channel)
        if (ownsPublisher) await shutdown(publisher)
        // A quit connection has answered everything sent before it; only stranded commands remain.
        for (const reject of unanswered) reject(new BusClosedError('redisBus', 'a publish was still waiting for Redis'))
        unanswered.clear()
      })()
      return closing
    },
  }
}

/** Unsubscribes (when given a channel) and quits a connection; drops it at once if it is not up. */
async function shutdown(connection: Redis, channel?: string): Promise<void> {
  if (connection.status !== 'ready') {
    connection.disconnect()
    return
  }
  try {
    if (channel !== undefined) await connection.unsubscribe(channel)
    await connection.quit()
  } catch {
    connection.disconnect()
  }
}

function validate(options: RedisBusOptions): RedisBusOptions {
  if (typeof options !== 'object' || options === null) {
    throw badArgument(TypeError, 'redisBus: options must be an object with exactly one of `client` or `url`')
  }
  const { client, url, channel, onHandlerError, onError } = options
  if ((client === undefined) === (url === undefined)) {
    throw badArgument(TypeError, 'redisBus: pass exactly one of `client` or `url`, got ' + (client === undefined ? 'neither' : 'both'))
  }
  if (client !== undefined && (typeof client !== 'object' || client === null || typeof client.duplicate !== 'function')) {
    throw badArgument(TypeError, 'redisBus: `client` must be an ioredis client')
  }
  if (url !== undefined && (typeof url !== 'string' || url.length === 0)) {
    throw badArgument(TypeError, `redisBus: \`url\` must be a non-empty string, got ${describe(url)}`)
  }
  if (channel !== undefined && (typeof channel !== 'string' || channel.length === 0)) {
    throw badArgument(TypeError, `redisBus: \`channel\` must be a non-empty string, got ${describe(channel)}`)
  }
  if (onHandlerError !== undefined && typeof onHandlerError !== 'function') {
    throw badArgument(TypeError, `redisBus: \`onHandlerError\` must be a function, got ${typeof onHandlerError}`)
  }
  if (onError !== undefined && typeof onError !== 'function') {
    throw badArgument(TypeError, `redisBus: \`onError\` must be a function, got ${typeof onError}`)
  }
  return options
}


