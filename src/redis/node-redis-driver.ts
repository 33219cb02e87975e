/**
 * The {@link Driver} of a node-redis client (the `redis` package, v5+): one made by `createClient()`,
 * `createCluster()` or `createSentinel()`. Recognised by its shape, not `instanceof` (two copies of
 * `@redis/client` may sit in one `node_modules`).
 *
 * - Scripts run as `EVALSHA`, then `EVAL` on `NOSCRIPT`, on every call (a new or promoted master
 *   has no scripts); node-redis pipelines the commands issued in one tick, so a batch is its calls
 *   issued together.
 * - Every call carries its own type mapping (bulk strings as Buffers for entries, strings
 *   otherwise), whatever the client's own; RESP2 and RESP3 clients answer the same values.
 * - A call made while the client (or, on a cluster, the key's master) is not connected rejects at
 *   once, so the offline queue never holds an L2 call: it fails fast whatever the client's settings.
 * - The bus's subscriber is a `duplicate()` of the client (on a cluster, of its connection to the
 *   channel's slot master) that never reconnects in place: when it ends, errs or its sharded channel
 *   moves, it is dropped and made again, so node-redis's silent resubscription is never relied on
 *   and each loss is a gap.
 */
import { performance } from 'node:perf_hooks'
import { calculateSlot } from './peers.js'
import {
  NotConnectedError,
  REPLY_ERROR,
  backoff,
  keyOf,
  ownListener,
  settlesWithin,
  userListenerCount,
  type Arg,
  type Call,
  type Driver,
  type Listener,
  type OutageReport,
  type Subscription,
} from './driver.js'

/**
 * The shape of a node-redis client EchoStore uses (`createClient()`, `createCluster()` or
 * `createSentinel()`, node-redis v5+), as they all have it.
 */
export interface NodeRedisClient {
  /** Sends one command (the signature differs per kind of client). */
  sendCommand(...args: never[]): Promise<unknown>
  /** A client whose replies map RESP types to JavaScript ones as told (node-redis's own). */
  withTypeMapping(...args: never[]): unknown
  /** Another client with the same options (the bus's subscriber). */
  duplicate(...args: never[]): unknown
  /** True while connected and ready for commands. */
  readonly isReady: boolean
  /** True between `connect()` and `close()`/`destroy()`. */
  readonly isOpen: boolean
  /** Listens to connection events (`error`, `ready`, `end`, cluster node events). */
  // biome-ignore lint/suspicious/noExplicitAny: event listeners of any signature, as EventEmitter takes them
  on(event: string, listener: (...args: any[]) => void): unknown
}

/** A standalone node-redis client, as the driver calls it. */
interface Single {
  sendCommand(args: readonly (string | Buffer)[], options?: object): Promise<unknown>
  duplicate(overrides?: object): Single
  connect(): Promise<unknown>
  close(): Promise<void>
  destroy(): void
  SUBSCRIBE(channel: string, listener: (message: Buffer, channel: Buffer) => void, bufferMode: true): Promise<unknown>
  SSUBSCRIBE(channel: string, listener: (message: Buffer, channel: Buffer) => void, bufferMode: true): Promise<unknown>
  UNSUBSCRIBE(channel: string): Promise<unknown>
  SUNSUBSCRIBE(channel: string): Promise<unknown>
  readonly isReady: boolean
  readonly isOpen: boolean
  readonly options?: { socket?: { host?: string; port?: number; path?: string; [option: string]: unknown }; url?: string }
  on(event: string, listener: (...args: never[]) => void): Single
  off(event: string, listener: (...args: never[]) => void): Single
  listenerCount(event: string): number
  listeners(event: string): unknown[]
  setMaxListeners(n: number): unknown
  getMaxListeners(): number
}

/** A node of a node-redis cluster's slot map. */
interface ClusterNode {
  readonly host: string
  readonly port: number
  readonly client?: Single
}

/** A node-redis cluster client, as the driver calls it. */
interface Cluster extends Omit<Single, 'sendCommand' | 'duplicate' | 'options'> {
  sendCommand(firstKey: string | undefined, isReadonly: boolean, args: readonly (string | Buffer)[], options?: object): Promise<unknown>
  readonly slots: readonly ({ master: ClusterNode } | undefined)[]
  readonly masters: readonly ClusterNode[]
  nodeClient(node: ClusterNode): Single | Promise<Single>
  readonly options?: { rootNodes?: readonly { url?: string; socket?: { host?: string; port?: number } }[] }
  /** Where node-redis keeps a cluster's options (not part of its typed API). */
  readonly _options?: Cluster['options']
}

/** A node-redis Sentinel client, as the driver calls it. */
interface Sentinel extends Omit<Single, 'sendCommand' | 'duplicate'> {
  sendCommand(isReadonly: boolean, args: readonly (string | Buffer)[], options?: object): Promise<unknown>
  getMasterNode(): { host: string; port: number } | undefined
  duplicate(overrides?: object): Sentinel
}

/** True for a node-redis client of any kind (by its shape). */
export function isNodeRedisClient(client: unknown): client is NodeRedisClient {
  if (typeof client !== 'object' || client === null) return false
  const c = client as Partial<NodeRedisClient>
  return typeof c.sendCommand === 'function' && typeof c.withTypeMapping === 'function' && typeof c.duplicate === 'function' && 'isOpen' in c
}

/** `RESP_TYPES.BLOB_STRING` (`$`): bulk strings, mapped to Buffers for the entries' bytes. */
const BLOB_STRING = 36
/** Every call's own type mapping: node-redis's defaults, or bulk strings as Buffers. */
const AS_STRINGS = { typeMapping: {} }
const AS_BUFFERS = { typeMapping: { [BLOB_STRING]: Buffer } }

const text = (arg: Arg): string | Buffer => (typeof arg === 'number' ? String(arg) : arg)
const nodeKey = (node: { host?: string; port?: number }): string => `${node.host ?? '127.0.0.1'}:${node.port ?? 6379}`

/** node-redis's cluster slot map, as far as the driver asks it to look again. */
interface Rediscover {
  rediscover?: (client: Single) => Promise<void>
}

/** Wraps a node-redis client (of any kind). */
export function nodeRedisDriver(given: NodeRedisClient): Driver {
  const shape = given as unknown as Partial<Cluster & Sentinel>
  const kind = typeof shape.nodeClient === 'function' && 'masters' in given ? 'cluster' : typeof shape.getMasterNode === 'function' ? 'sentinel' : 'single'
  const single = given as unknown as Single
  const cluster = given as unknown as Cluster
  const sentinel = given as unknown as Sentinel
  // Another adapter's listener on a shared client is not the user's: only unmarked ones count.
  const hadErrorListener = userListenerCount(single, 'error') > 0

  const masterNode = (key: string): ClusterNode | undefined => cluster.slots[calculateSlot(key)]?.master
  const masterOf = (key: string): string | undefined => {
    if (kind !== 'cluster') return undefined
    const node = masterNode(key)
    return node === undefined ? undefined : nodeKey(node)
  }
  const where = (): string => {
    if (kind === 'cluster')
      return (((cluster as unknown as { _self?: Cluster })._self?._options ?? cluster._options ?? cluster.options)?.rootNodes ?? [])
        .map((n) => n.url?.replace(/^rediss?:\/\/([^@/]*@)?/, '').replace(/\/.*$/, '') ?? nodeKey(n.socket ?? {}))
        .join(', ')
    if (kind === 'sentinel') {
      const master = sentinel.getMasterNode()
      return `sentinel master ${(sentinel as unknown as { options?: { name?: string } }).options?.name ?? ''}${master === undefined ? '' : ` (${nodeKey(master)})`}`
    }
    const socket = single.options?.socket ?? {}
    return typeof socket.path === 'string' ? socket.path : nodeKey(socket)
  }

  // When the slot map was last asked for again: written by refreshSlots only.
  let refreshedAt = -Infinity
  /**
   * Asks a master that answers for the slot map again, at most every 500 ms: node-redis does so only
   * on a MOVED, which never comes for the slots of a master that died (its calls are refused here
   * before they are sent), so a promoted replica would otherwise never be used.
   */
  const refreshSlots = (): void => {
    const now = performance.now()
    if (now - refreshedAt < 500) return
    refreshedAt = now
    // node-redis's own slot map (not part of its typed API), on the client's `_self` where commands are proxied.
    const internal = cluster as unknown as { _self?: { _slots?: Rediscover }; _slots?: Rediscover }
    const slots = internal._self?._slots ?? internal._slots
    const alive = cluster.masters.find((m) => m.client?.isReady === true)?.client
    if (alive !== undefined && typeof slots?.rediscover === 'function') slots.rediscover(alive).catch(() => {})
  }

  /** Rejects at once (never queued) while the connection the call goes to is not ready. */
  const ready = (key: string): void => {
    if (kind === 'cluster') {
      const client = masterNode(key)?.client
      if (!cluster.isOpen || (client !== undefined && !client.isReady)) {
        refreshSlots()
        throw new NotConnectedError(masterOf(key) ?? where())
      }
    } else if (!single.isReady) throw new NotConnectedError(where())
  }
  const send = (key: string, args: readonly (string | Buffer)[], options: object): Promise<unknown> => {
    if (kind === 'cluster') return cluster.sendCommand(key, false, args, options)
    if (kind === 'sentinel') return sentinel.sendCommand(false, args, options)
    return single.sendCommand(args, options)
  }

  async function run(call: Call): Promise<unknown> {
    const key = keyOf(call)
    ready(key)
    if (!('script' in call)) return send(key, [call.command, call.key, ...call.args.map(text)], AS_STRINGS)
    const options = call.buffers === true ? AS_BUFFERS : AS_STRINGS
    const rest = [String(call.keys.length), ...call.keys, ...call.args.map(text)]
    try {
      return await send(key, ['EVALSHA', call.script.sha, ...rest], options)
    } catch (error) {
      if (!(error instanceof Error && error.message.startsWith('NOSCRIPT'))) throw error
      return send(key, ['EVAL', call.script.lua, ...rest], options)
    }
  }

  return {
    library: 'node-redis',
    isCluster: kind === 'cluster',
    run,
    /** The calls issued in one tick: node-redis writes them in one pipeline per connection. */
    runMany: (calls) =>
      Promise.all(
        calls.map((call) =>
          run(call).then(
            (reply) => ({ reply }),
            (error: unknown) => ({ error: error instanceof Error ? error : new Error(String(error)) }),
          ),
        ),
      ),
    masterOf,
    isReply: (error) => error instanceof Error && (['ErrorReply', 'SimpleError', 'BlobError'].includes(error.constructor.name) || REPLY_ERROR.test(error.message)),
    address: () => (kind === 'single' ? where() : kind === 'sentinel' ? mapDefined(sentinel.getMasterNode(), nodeKey) : undefined),
    where,
    keyPrefix: () => '',
    hasErrorListener: () => hadErrorListener,
    watch: (report) => watch(single, kind, report),

    publish(channel, payload, sharded) {
      // Never left in the offline queue (node-redis holds it for ever): a publish while down fails, as pub/sub would lose it anyway.
      try {
        ready(channel)
      } catch (error) {
        return Promise.reject(error)
      }
      if (kind === 'cluster') return cluster.sendCommand(channel, false, [sharded ? 'SPUBLISH' : 'PUBLISH', channel, payload], AS_STRINGS)
      return send(channel, ['PUBLISH', channel, payload], AS_STRINGS)
    },
    async hasShardedPubSub(closed) {
      for (let attempt = 1; ; attempt++) {
        try {
          const info = await cluster.sendCommand(undefined, true, ['COMMAND', 'INFO', 'SSUBSCRIBE'], AS_STRINGS)
          return Array.isArray(info) && Array.isArray(info[0])
        } catch (error) {
          if (closed()) throw error
          if (error instanceof Error && REPLY_ERROR.test(error.message)) return false
          await new Promise((resolve) => setTimeout(resolve, backoff(attempt)))
        }
      }
    },
    listen(channel, sharded, listener, report) {
      if (kind === 'cluster') {
        return subscription(
          channel,
          sharded,
          listener,
          report,
          async () => {
            const node = masterNode(channel)
            if (node === undefined) return undefined
            return { base: await cluster.nodeClient(node), node: nodeKey(node) }
          },
          refreshSlots,
        )
      }
      if (kind === 'sentinel') {
        return subscription(channel, false, listener, report, async () => {
          const master = sentinel.getMasterNode()
          return master === undefined ? undefined : { base: sentinel.duplicate() as unknown as Single, node: nodeKey(master), sentinel: true }
        })
      }
      return subscription(channel, false, listener, report, async () => ({ base: single, node: '' }))
    },
    async quit(timeout) {
      if (!single.isOpen) return
      // A PING answered first: every reply before it has arrived, so close() has nothing to wait for
      // (a server that stopped answering never replies, and a client of node-redis 5 cannot be
      // destroyed once close() began).
      const ping = () => (kind === 'cluster' ? cluster.sendCommand(undefined, true, ['PING'], AS_STRINGS) : send('', ['PING'], AS_STRINGS))
      if (single.isReady && (await settlesWithin((async () => (await ping(), await single.close()))(), timeout))) return
      drop(single)
    },
  }
}

const mapDefined = <T, U>(value: T | undefined, map: (value: T) => U): U | undefined => (value === undefined ? undefined : map(value))

/**
 * Listens to a client's connection events: errors and recoveries go to `report`, per node on a
 * cluster (its `node-error`, and the node's next `ready`). Returns the function that stops listening.
 */
function watch(client: Single, kind: 'single' | 'cluster' | 'sentinel', report: OutageReport): () => void {
  const listeners: [string, (...args: never[]) => void][] = []
  // Adapters sharing one client each add one listener per event and take it back on close: no leak to warn of.
  client.setMaxListeners(client.getMaxListeners() + 1)
  const on = (event: string, listener: (...args: never[]) => void) => {
    client.on(event, ownListener(listener))
    listeners.push([event, listener])
  }
  on('error', (error: unknown) => report.failed('', error))
  if (kind === 'cluster') {
    const cluster = client as unknown as Cluster
    on('connect', () => report.recovered(''))
    on('node-error', (error: unknown, node: { host: string; port: number }) => {
      const at = nodeKey(node)
      report.failed(at, error)
      // node-redis tells a node's first ready only: listen to the node's own client for its next one.
      const connection = cluster.masters.find((m) => nodeKey(m) === at)?.client
      connection?.on('ready', () => report.recovered(at))
    })
    on('node-ready', (node: { host: string; port: number }) => report.recovered(nodeKey(node)))
  } else {
    on('ready', () => report.recovered(''))
    if (kind === 'sentinel') on('topology-change', () => report.recovered(''))
  }
  return () => {
    for (const [event, listener] of listeners) client.off(event, listener)
    client.setMaxListeners(Math.max(0, client.getMaxListeners() - 1))
  }
}

/**
 * A subscription on a connection of the bus's own: a `duplicate()` of what `target` answers (the
 * client, the cluster's connection to the channel's slot master, or a new Sentinel client, which is
 * dropped at its first error rather than left to resubscribe silently) that is never reconnected in place. It subscribes once connected; when it errs, ends, or the server moves
 * its sharded channel, it is dropped (`lost`) and made again after a backoff (`refresh` first, so a
 * cluster learns where the slot went); each confirmation is `confirmed`, a gap after a loss.
 */
function subscription(
  channel: string,
  sharded: boolean,
  listener: Listener,
  report: OutageReport,
  target: () => Promise<{ base: Single; node: string; sentinel?: boolean } | undefined>,
  refresh?: () => void,
): Subscription {
  // Written by connect and retarget only.
  let current: Single | undefined
  let attempt = 0
  let retry: ReturnType<typeof setTimeout> | undefined
  const onMessage = (message: Buffer, from: Buffer): void => listener.payload(from, message)

  const again = (): void => {
    attempt++
    retry = setTimeout(() => void connect(), backoff(attempt))
  }

  const retarget = (subscriber: Single): void => {
    if (subscriber !== current) return
    current = undefined
    listener.lost()
    drop(subscriber)
    if (listener.closed()) return
    refresh?.()
    again()
  }

  const connect = async (): Promise<void> => {
    retry = undefined
    if (listener.closed()) return
    let made: Awaited<ReturnType<typeof target>>
    try {
      made = await target()
    } catch (error) {
      report.failed('', error)
      made = undefined
    }
    if (listener.closed()) return
    if (made === undefined) return again()
    const { base, node } = made
    const subscriber =
      made.sentinel === true
        ? base
        : base.duplicate({
            // Never reconnected in place: a new one is made when this one ends.
            socket: { ...base.options?.socket, reconnectStrategy: false },
            // Never queue: a command on a connection that is not up fails, and the subscription is made again.
            disableOfflineQueue: true,
          })
    current = subscriber
    // An error is a loss: the subscriber is dropped and made again, and the next confirmation is a
    // gap. A Sentinel client ends and makes its node connections itself, and resubscribes silently
    // (a message published while its subscriber connection was down is lost without a word): its
    // errors, its connections' losses among them, are its losses, as its master changing is.
    subscriber.on('error', (error: unknown) => {
      report.failed(node, error)
      retarget(subscriber)
    })
    if (made.sentinel !== true) {
      subscriber.on('end', () => retarget(subscriber))
      subscriber.on('sharded-channel-moved', () => retarget(subscriber))
    }
    try {
      await subscriber.connect()
      if (subscriber !== current) return
      await (sharded ? subscriber.SSUBSCRIBE(channel, onMessage, true) : subscriber.SUBSCRIBE(channel, onMessage, true))
      if (subscriber !== current) return
      // Its connect tells the first master as a change too: only a change after the subscription is a loss.
      if (made.sentinel === true) subscriber.on('topology-change', (event: { type?: string }) => event?.type === 'MASTER_CHANGE' && retarget(subscriber))
      attempt = 0
      report.recovered(node)
      listener.confirmed()
    } catch (error) {
      if (subscriber !== current) return
      report.failed(node, error)
      retarget(subscriber)
    }
  }

  void connect()

  return {
    async close(timeout) {
      if (retry !== undefined) clearTimeout(retry)
      const subscriber = current
      current = undefined
      if (subscriber === undefined) return
      // Unsubscribed within the bound (its reply comes after every earlier one, so close() then has
      // nothing to wait for), else dropped: a server that stopped answering never replies.
      const unsubscribe = () => (sharded ? subscriber.SUNSUBSCRIBE(channel) : subscriber.UNSUBSCRIBE(channel))
      if (subscriber.isReady && (await settlesWithin((async () => (await unsubscribe(), await subscriber.close()))(), timeout))) return
      drop(subscriber)
    },
  }
}

/**
 * Drops a connection at once, whatever its state (a close() still waiting for replies included:
 * node-redis 6 destroys its socket then); its late errors are nobody's.
 */
function drop(connection: Single): void {
  connection.on('error', () => {})
  try {
    connection.destroy()
  } catch {
    // already closed (node-redis 5 refuses to destroy a client whose close() began)
  }
}
