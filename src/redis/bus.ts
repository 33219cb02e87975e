/**
 * The coherence bus on Redis pub/sub: tables in several processes sharing one channel, on one Redis,
 * a Sentinel set or a Cluster.
 *
 * Messages are published through a normal connection (the client you give, or one the bus opens)
 * and received on a dedicated subscriber connection, in the wire format of `../bus/message.ts`,
 * stamped with the bus's `namespace` (its key space: the L2 prefix). Every payload received goes
 * through `decodeWire`: a valid one of this namespace is delivered as `{ type: 'message' }` (one
 * frozen object shared by every handler), a valid one of another namespace as `{ type: 'foreign' }`
 * (tables ignore and count it), anything else as `{ type: 'invalid', reason }`.
 *
 * On a cluster the bus uses sharded pub/sub (`SSUBSCRIBE`/`SPUBLISH`, Redis ≥ 7 and Valkey) when the
 * servers have it, classic pub/sub otherwise; its subscriber is a connection of its own to the
 * master serving the channel's slot, made again (on the slot's master then) whenever it drops, the
 * slot moves or the server ends the subscription. The client may be ioredis's or node-redis's (see
 * `driver.ts`): the messages are the same bytes, so buses on either client hear each other.
 *
 * Pub/sub is at-most-once. Whenever the subscription drops, moves or reconnects, the bus subscribes
 * again, waits for Redis to confirm, and only then delivers `{ type: 'gap' }` to every handler:
 * messages published while it was away are lost, and every message published after the gap is
 * heard. The first subscription is not a gap; await `subscribed()` to know when the bus is listening.
 *
 * Handlers run synchronously, in subscription order, as each payload arrives; a handler that
 * throws does not stop the others (its error goes to `onHandlerError`, or is dropped). An outage
 * is reported once (to `onError`, or as a process warning) until the connection is back, and never
 * crashes the process; the connections keep reconnecting meanwhile.
 */
import { BusClosedError, RedisUnreachableError, badArgument, badNumber, describe } from '../core/errors.js'
import { CONNECTION_OPTIONS, openConnection, validateConnection, type RedisConnectionOptions } from './connection.js'
import { readOptions } from '../table/read-options.js'
import type { Subscription } from './driver.js'
import type { Bus, BusDelivery, CoherenceMessage } from '../bus/bus.js'
import { MAX_TABLE_LENGTH, decodeWire, encodeWire, publishable } from '../bus/message.js'
import { PUBLISH_TIMEOUT } from '../bus/publish.js'

/** The namespace used when none is given: `redisL2`'s default prefix. */
export const DEFAULT_NAMESPACE = 'echostore:'

/** The channel used when neither a channel nor a namespace is given: `${DEFAULT_NAMESPACE}coherence`. */
export const DEFAULT_CHANNEL = `${DEFAULT_NAMESPACE}coherence`

/** How long `subscribed()` waits when given no timeout, in ms. */
export const SUBSCRIBED_TIMEOUT = 10_000

/** Options of `redisBus`: where Redis is (exactly one of `client`, `url` and `sentinels`), and what it carries. */
export interface RedisBusOptions extends RedisConnectionOptions {
  /**
   * The key space the bus serves: give it the L2's `prefix` (or any name the deployment's processes
   * share). Messages carry it; one from another namespace is delivered as `foreign` and ignored.
   * Default {@link DEFAULT_NAMESPACE}.
   */
  namespace?: string
  /** The pub/sub channel every process of the deployment shares. Default `${namespace}coherence`. */
  channel?: string
  /**
   * On a cluster: `true` uses sharded pub/sub (it fails when the servers lack it), `false` classic
   * pub/sub; default: sharded when the servers have `SSUBSCRIBE`. Ignored off a cluster (classic).
   */
  sharded?: boolean
  /** Receives what a subscriber threw, with the delivery it was handling. Default: dropped. */
  onHandlerError?: (error: unknown, delivery: BusDelivery) => void
}

/** How long `subscribed` may wait. */
export interface SubscribedOptions {
  /** In ms; default {@link SUBSCRIBED_TIMEOUT}. */
  timeout?: number
  /** Gives up when aborted. */
  signal?: AbortSignal
}

/** A Redis bus: the `Bus` contract plus a way to wait until it is listening. */
export interface RedisBus extends Bus {
  /** The channel it publishes and listens on. */
  readonly channel: string
  /** The key space it serves (stamped on every message it publishes). */
  readonly namespace: string
  /**
   * Resolves once Redis has confirmed the first subscription to the channel. Rejects with
   * `RedisUnreachableError` (code `ECHOSTORE_REDIS_UNREACHABLE`), naming the host and carrying the
   * connection's error as `cause`, when that did not happen within `timeout` or before `signal`
   * aborted; with code `ECHOSTORE_BUS_CLOSED` if the bus is closed first. Messages published earlier are not heard.
   */
  subscribed(options?: SubscribedOptions): Promise<void>
  /** `await using` support: the same as `close()`. */
  [Symbol.asyncDispose](): Promise<void>
}

type Handler = (delivery: BusDelivery) => void

const GAP: BusDelivery = Object.freeze({ type: 'gap' })

/**
 * Creates a Redis pub/sub bus. Throws a `TypeError` naming the option when not exactly one of
 * `client` / `url` / `sentinels` is given or an option has the wrong type. `publish` rejects with a
 * `TypeError` for a malformed message, and with code `ECHOSTORE_BUS_CLOSED` after `close()`; it
 * resolves once Redis has accepted the message. A publish made before the bus first connected waits
 * for the connection no longer than `PUBLISH_TIMEOUT`, then rejects with `RedisUnreachableError`. `close()` unsubscribes and quits the connections the
 * bus opened (dropping at once those that are not up, and those that did not answer within
 * `PUBLISH_TIMEOUT`, so it settles even while Redis is frozen); a publish still unanswered when it finishes
 * (queued during an outage) rejects with code `ECHOSTORE_BUS_CLOSED`.
 */
export function redisBus(given: RedisBusOptions): RedisBus {
  const options = readOptions(given, REDIS_BUS_OPTIONS, 'redisBus') as RedisBusOptions
  validate(options)
  const { namespace = DEFAULT_NAMESPACE, onHandlerError, sharded: wantSharded } = options
  const channel = options.channel ?? `${namespace}coherence`
  // close() waits for a graceful unsubscribe and quit no longer than a table waits for a publish.
  const connection = openConnection('redisBus', options, PUBLISH_TIMEOUT)
  const channelBytes = Buffer.from(channel)

  // Written by subscribe, unsubscribe and close; delivery iterates a snapshot.
  const handlers = new Set<{ handler: Handler; active: boolean }>()
  let closed = false
  let closing: Promise<void> | undefined
  // Written by the subscription's listeners only.
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
    if (!decoded.ok) return deliver(Object.freeze({ type: 'invalid', reason: decoded.reason }))
    const space = decoded.namespace ?? DEFAULT_NAMESPACE
    deliver(space === namespace ? Object.freeze({ type: 'message', message: Object.freeze(decoded.message) }) : Object.freeze({ type: 'foreign', namespace: space }))
  }

  /** Called once Redis confirmed a (re)subscription: the first resolves `subscribed()`, a later one after a loss is a gap. */
  const confirmed = (): void => {
    if (closed) return
    if (!confirmedOnce) {
      confirmedOnce = true
      resolveSubscribed()
    } else if (lostSinceConfirmed) {
      lostSinceConfirmed = false
      deliver(GAP)
    }
  }
  const lost = (): void => {
    if (confirmedOnce) lostSinceConfirmed = true
  }

  // The subscription and the way to publish, once the connection said what it is. The subscription
  // is on a connection of the driver's own, made from the client; it reports each loss before the
  // next confirmation.
  const listener = { payload: onPayload, confirmed, lost, closed: () => closed }
  const plan = connection.driver.then(async (driver): Promise<{ publish: (payload: string) => Promise<unknown>; subscription: Subscription }> => {
    const sharded = driver.isCluster && (wantSharded ?? (await driver.hasShardedPubSub(() => closed)))
    return {
      publish: (payload: string) => driver.publish(channel, payload, sharded),
      subscription: driver.listen(channel, sharded, listener, connection.report),
    }
  })
  // Written once, when the plan is made.
  let planned = false
  /**
   * Publishes waiting for the plan (the first connection), each until the plan is made or failed,
   * or `PUBLISH_TIMEOUT` passes: one reaction on the plan for all of them, so a publish that gave up
   * (while Redis never answered) leaves nothing behind. Written by {@link planFor} and the plan's reaction.
   */
  const waitingForPlan = new Set<() => void>()
  plan.then(
    (made) => {
      planned = true
      // Made after close() gave up waiting for it: take it down at once.
      if (closed) void made.subscription.close(PUBLISH_TIMEOUT)
    },
    () => {},
  )
  plan
    .finally(() => {
      for (const go of waitingForPlan) go()
      waitingForPlan.clear()
    })
    .catch(() => {})

  /** The plan, once made; waited for no longer than `PUBLISH_TIMEOUT` (then refused as unreachable). */
  function planFor(): Promise<Awaited<typeof plan>> {
    if (planned) return plan
    return new Promise((resolve, reject) => {
      const go = () => {
        clearTimeout(timer)
        resolve(plan)
      }
      const timer = setTimeout(() => {
        waitingForPlan.delete(go)
        reject(new RedisUnreachableError('redisBus', connection.where, `had no connection within ${PUBLISH_TIMEOUT} ms to publish on (channel ${describe(channel)})`, { cause: connection.cause() }))
      }, PUBLISH_TIMEOUT)
      waitingForPlan.add(go)
    })
  }

  return {
    /** `await using` support: the same as `close()`. */
    [Symbol.asyncDispose](): Promise<void> {
      return this.close()
    },
    channel,
    namespace,

    async publish(message: CoherenceMessage): Promise<void> {
      if (closed) throw new BusClosedError('redisBus', 'publish refused')
      const payload = encodeWire(publishable('redisBus', message), namespace)
      await new Promise<void>((resolve, reject) => {
        unanswered.add(reject)
        planFor()
          .then((p) => p.publish(payload))
          .then(
            () => (unanswered.delete(reject), resolve()),
            (error: unknown) => (unanswered.delete(reject), reject(closed ? new BusClosedError('redisBus', 'a publish was still waiting for Redis') : error)),
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

    subscribed(wait: SubscribedOptions = {}): Promise<void> {
      const { timeout = SUBSCRIBED_TIMEOUT, signal } = checkSubscribed(wait)
      if (confirmedOnce || closed) return firstSubscription
      const waiting = new Promise<void>((resolve, reject) => {
        const giveUp = (what: string, reason?: unknown) => {
          done()
          reject(new RedisUnreachableError('redisBus', connection.where, `${what} (channel ${describe(channel)})`, { cause: connection.cause() ?? reason }))
        }
        const onAbort = () => giveUp('was given up on before it confirmed the subscription', signal?.reason)
        const timer = setTimeout(() => giveUp(`did not confirm the subscription within ${timeout} ms`), timeout)
        const done = () => {
          clearTimeout(timer)
          signal?.removeEventListener('abort', onAbort)
        }
        if (signal?.aborted) return onAbort()
        signal?.addEventListener('abort', onAbort, { once: true })
        firstSubscription.then(
          () => (done(), resolve()),
          (error: unknown) => (done(), reject(error)),
        )
      })
      // Like the first subscription itself: a wait nobody awaits is no unhandled rejection.
      waiting.catch(() => {})
      return waiting
    },

    close(): Promise<void> {
      if (closing !== undefined) return closing
      closed = true
      handlers.clear()
      rejectSubscribed(new BusClosedError('redisBus', 'it closed before its subscription was confirmed'))
      closing = (async () => {
        // No plan yet (a url unanswered, a cluster not answering): never wait for it (a given client
        // may never answer); a plan made later is taken down as it is made.
        // The subscriber and the publishing connection are closed together, each within PUBLISH_TIMEOUT.
        await Promise.all([planned ? plan.then((made) => made.subscription.close(PUBLISH_TIMEOUT)) : undefined, connection.close()])
        // A quit connection has answered everything sent before it; only stranded commands remain.
        for (const reject of unanswered) reject(new BusClosedError('redisBus', 'a publish was still waiting for Redis'))
        unanswered.clear()
      })()
      return closing
    },
  }
}

function checkSubscribed(options: SubscribedOptions): SubscribedOptions {
  if (typeof options !== 'object' || options === null) throw badArgument(TypeError, `redisBus.subscribed: options must be an object, got ${describe(options)}`)
  const { timeout, signal } = options
  if (timeout !== undefined && !(typeof timeout === 'number' && Number.isFinite(timeout) && timeout > 0)) {
    throw badNumber(timeout, `redisBus.subscribed: \`timeout\` must be a finite number of ms > 0, got ${describe(timeout)}`)
  }
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw badArgument(TypeError, `redisBus.subscribed: \`signal\` must be an AbortSignal, got ${describe(signal)}`)
  return options
}

/** The options {@link redisBus} knows; any other key is refused (a typo would otherwise take a default silently). */
const REDIS_BUS_OPTIONS = [...CONNECTION_OPTIONS, 'namespace', 'channel', 'sharded', 'onHandlerError'] as const

function validate(options: RedisBusOptions): void {
  if (typeof options !== 'object' || options === null) {
    throw badArgument(TypeError, 'redisBus: options must be an object with exactly one of `client`, `url` and `sentinels`')
  }
  validateConnection('redisBus', options)
  const { channel, namespace, sharded, onHandlerError } = options
  if (channel !== undefined && (typeof channel !== 'string' || channel.length === 0)) {
    throw badArgument(TypeError, `redisBus: the option \`channel\` must be a non-empty string, got ${describe(channel)}`)
  }
  if (namespace !== undefined && (typeof namespace !== 'string' || namespace.length > MAX_TABLE_LENGTH)) {
    throw badArgument(TypeError, `redisBus: the option \`namespace\` must be a string of at most ${MAX_TABLE_LENGTH} code units, got ${describe(namespace)}`)
  }
  if (sharded !== undefined && typeof sharded !== 'boolean') throw badArgument(TypeError, `redisBus: the option \`sharded\` must be a boolean, got ${describe(sharded)}`)
  if (onHandlerError !== undefined && typeof onHandlerError !== 'function') {
    throw badArgument(TypeError, `redisBus: the option \`onHandlerError\` must be a function, got ${describe(onHandlerError)}`)
  }
}
