/**
 * The {@link Driver} of an ioredis client (`Redis`, a Sentinel `Redis`, or `Cluster`), and of a
 * client of a fork that keeps ioredis's API (iovalkey). Scripts are installed with `defineCommand`
 * (ioredis runs them with `EVALSHA`, `EVAL` on `NOSCRIPT`), batches are ioredis pipelines, one per
 * master on a cluster, and the bus's subscriber is a `duplicate()` (one node) or a connection of its
 * own to the channel's slot master (cluster), made again whenever it drops or the slot moves.
 * An L2 call while the client is not `ready` is refused at once (`NotConnectedError`), never left in
 * ioredis's offline queue to be sent after the caller gave up on it; only a client EchoStore opened
 * holds the calls made before its first connect there.
 */
import type { Cluster, Redis } from 'ioredis'
import { calculateSlot } from './peers.js'
import {
  NotConnectedError,
  REPLY_ERROR,
  backoff,
  keyOf,
  ownListener,
  settlesWithin,
  userListenerCount,
  type Call,
  type Driver,
  type Listener,
  type OutageReport,
  type Script,
  type Subscription,
} from './driver.js'

/** An ioredis client: a single-node (or Sentinel) client, or a cluster client. */
export type IoredisClient = Redis | Cluster

/** True for a client of ioredis's API (ioredis itself, iovalkey): it installs scripts with `defineCommand`. */
export function isIoredisClient(client: unknown): client is IoredisClient {
  return typeof client === 'object' && client !== null && typeof (client as Partial<Redis>).defineCommand === 'function' && typeof (client as Partial<Redis>).duplicate === 'function'
}

const isClusterClient = (client: IoredisClient): client is Cluster => (client as { isCluster?: boolean }).isCluster === true

const nodeKey = (options: { host?: string; port?: number }): string => `${options.host ?? '127.0.0.1'}:${options.port ?? 6379}`

/** A pipeline as the driver queues calls on it (the scripts are its commands once defined). */
type Pipeline = Record<string, (...args: unknown[]) => Pipeline> & { exec(): Promise<[Error | null, unknown][] | null> }

/**
 * Wraps an ioredis client. `opened`: EchoStore opened it (a `url`, `sentinels`), so the calls made
 * before its first connect wait for it in its offline queue (`FAIL_FAST` bounds that); a client given
 * is refused every call while it is not ready, as it is once an opened one was ready.
 */
export function ioredisDriver(client: IoredisClient, { opened = false }: { opened?: boolean } = {}): Driver {
  const cluster = isClusterClient(client)
  // Another adapter's listener on a shared client is not the user's: only unmarked ones count.
  const hadErrorListener = userListenerCount(client, 'error') > 0
  // Whether the client was ready once: set only by the adapters' watch, as it hears it become so (an
  // opened client is watched from before it connects).
  let connectedOnce = client.status === 'ready' || !opened
  // The scripts installed on the client so far, by name: written by install only.
  const installed = new Set<string>()
  const install = (script: Script): string => {
    if (!installed.has(script.name)) {
      client.defineCommand(script.name, { lua: script.lua, numberOfKeys: script.keys })
      installed.add(script.name)
    }
    return script.name
  }
  /** Queues `call` on `target` (the client or a pipeline): the script's command, `…Buffer` for Buffer replies. */
  const send = <T>(target: unknown, call: Call): T => {
    const commands = target as Record<string, (...args: unknown[]) => T>
    if ('script' in call) return commands[`${install(call.script)}${call.buffers === true ? 'Buffer' : ''}`]!.call(target, ...call.keys, ...call.args)
    return commands[call.command.toLowerCase()]!.call(target, call.key, ...call.args)
  }

  /** The client's own keyPrefix, written before every key it sends; `''` if none. */
  const keyPrefix = (): string => {
    const options = (client as { options?: { keyPrefix?: unknown; redisOptions?: { keyPrefix?: unknown } } }).options
    const prefix = options?.keyPrefix ?? options?.redisOptions?.keyPrefix
    return typeof prefix === 'string' ? prefix : ''
  }
  const masterOf = (key: string): string | undefined => (cluster ? (client as Cluster).slots[calculateSlot(key)]?.[0] : undefined)
  const where = (): string => {
    const startup = (client as unknown as { startupNodes?: ({ host?: string; port?: number } | string)[] }).startupNodes
    if (Array.isArray(startup)) return startup.map((n) => (typeof n === 'string' ? n : nodeKey(n))).join(', ')
    const options = (client as Redis).options ?? {}
    if (Array.isArray(options.sentinels)) return `sentinel master ${options.name} (${options.sentinels.map((s) => nodeKey(s as { host?: string; port?: number })).join(', ')})`
    return nodeKey(options)
  }
  /**
   * The error refusing a call to `key` while the client is not ready (ioredis would hold it in its
   * offline queue and send it once reconnected, long after the caller gave up), or undefined.
   */
  const refusal = (key: string): NotConnectedError | undefined => {
    if (client.status === 'ready' || !connectedOnce) return undefined
    return new NotConnectedError(masterOf(key) ?? where())
  }

  return {
    library: 'ioredis',
    isCluster: cluster,
    run(call) {
      const refused = refusal(keyOf(call))
      return refused === undefined ? send<Promise<unknown>>(client, call) : Promise.reject(refused)
    },

    /** One pipeline on a single node; one per master serving the keys' slots on a cluster, as ioredis groups a pipeline (a slot not in the slot map yet goes alone). */
    async runMany(calls) {
      if (calls.length > 0 && refusal(keyOf(calls[0]!)) !== undefined) return calls.map((call) => ({ error: refusal(keyOf(call))! }))
      const groups = new Map<string, number[]>()
      // A pipeline has the commands its client had when it was made: install the scripts first.
      for (const call of calls) if ('script' in call) install(call.script)
      calls.forEach((call, i) => {
        const slot = cluster ? calculateSlot(keyOf(call)) : 0
        const group = cluster ? ((client as Cluster).slots[slot]?.join(',') ?? `slot ${slot}`) : ''
        const at = groups.get(group)
        if (at === undefined) groups.set(group, [i])
        else at.push(i)
      })
      const replies = new Array<{ error: Error } | { reply: unknown }>(calls.length)
      await Promise.all(
        [...groups.values()].map(async (indices) => {
          const pipeline = client.pipeline() as unknown as Pipeline
          for (const i of indices) send(pipeline, calls[i]!)
          let answers: [Error | null, unknown][]
          try {
            answers = (await pipeline.exec()) ?? []
          } catch (error) {
            answers = indices.map(() => [error as Error, undefined])
          }
          indices.forEach((i, at) => {
            const [error, reply] = answers[at] ?? [new Error('echostore: redisL2: a pipeline answered fewer replies than it had commands'), undefined]
            replies[i] = error !== null ? { error } : { reply }
          })
        }),
      )
      return replies
    },

    masterOf,
    isReply: (error) => error instanceof Error && (error.name === 'ReplyError' || REPLY_ERROR.test(error.message)),
    address() {
      const options = (client as Partial<Redis>).options
      if (options === undefined || cluster) return undefined
      if (typeof options.path === 'string' && options.path !== '') return options.path
      return nodeKey(options)
    },
    where,
    keyPrefix,
    hasErrorListener: () => hadErrorListener,
    watch: (report) =>
      watch(client, {
        failed: (node, error) => report.failed(node, error),
        recovered: (node) => {
          if (node === '') connectedOnce = true
          report.recovered(node)
        },
      }),

    publish(channel, payload, sharded) {
      if (!cluster) return client.publish(channel, payload)
      if (!sharded) return slotMaster(client as Cluster, channel).publish(channel, payload)
      // SPUBLISH names its channel as a key, so a Cluster's own keyPrefix would be written before it;
      // the subscription is on the bare channel (as every other client's): the slot's master publishes it.
      if (keyPrefix() === '') return (client as Cluster).spublish(channel, payload)
      const master = slotMaster(client as Cluster, channel)
      if (master === client) return Promise.reject(new NotConnectedError(`the master of channel ${channel}`))
      return master.spublish(channel, payload)
    },
    hasShardedPubSub: (closed) => hasShardedPubSub(client as Cluster, closed),
    listen: (channel, sharded, listener, report) => (cluster ? clusterSubscription(client as Cluster, channel, sharded, listener) : singleNode(client as Redis, channel, listener, report)),
    quit: (timeout) => quit(client, timeout),
  }
}

/**
 * Listens to a client's connection events: errors and recoveries go to `report`, per node for a
 * cluster (a node the cluster dropped, after a failover, is no outage any more). Returns the
 * function that stops listening.
 */
function watch(client: IoredisClient, report: OutageReport): () => void {
  const listeners: [string, (...args: never[]) => void][] = []
  // Adapters sharing one client each add one listener per event and take it back on close: no leak to warn of.
  client.setMaxListeners(client.getMaxListeners() + 1)
  const on = (event: string, listener: (...args: never[]) => void) => {
    client.on(event, ownListener(listener) as (...args: unknown[]) => void)
    listeners.push([event, listener])
  }
  on('error', (error: unknown) => report.failed('', error))
  on('ready', () => report.recovered(''))
  if (isClusterClient(client)) {
    on('node error', (error: unknown, node: string) => report.failed(node, error))
    on('+node', (redis: Redis) => redis.on('ready', () => report.recovered(nodeKey(redis.options))))
    on('-node', (redis: Redis) => report.recovered(nodeKey(redis.options)))
  }
  return () => {
    for (const [event, listener] of listeners) client.off(event, listener as (...args: unknown[]) => void)
    client.setMaxListeners(Math.max(0, client.getMaxListeners() - 1))
  }
}

/**
 * Quits gracefully when connected (pending replies arrive first) for at most `timeout` ms (a server
 * that stopped answering never replies to `QUIT`), else, or then, drops the connection at once.
 */
async function quit(client: IoredisClient, timeout: number): Promise<void> {
  if (client.status === 'ready' && (await settlesWithin(client.quit(), timeout))) return
  client.disconnect()
}

/**
 * Classic pub/sub on one node (or a Sentinel master): a `duplicate()` of the client, which subscribes
 * on every (re)connection, ioredis's own `autoResubscribe` or not. The subscription closes it.
 */
function singleNode(client: Redis, channel: string, listener: Listener, report: OutageReport): Subscription {
  const subscriber = client.duplicate()
  const unwatch = watch(subscriber, report)
  const onReady = (): void => {
    if (listener.closed()) return
    subscriber.subscribe(channel).then(listener.confirmed, () => {
      // The connection dropped again before confirming: its next 'ready' subscribes again.
    })
  }
  const onPayload = (from: Buffer, payload: Buffer) => listener.payload(from, payload)
  subscriber.on('ready', onReady)
  subscriber.on('close', listener.lost)
  subscriber.on('messageBuffer', onPayload)
  // A lazy client duplicates into a lazy subscriber: connect it now, so it starts listening.
  if (subscriber.status === 'wait') subscriber.connect().catch(() => {})
  else if (subscriber.status === 'ready') onReady()
  return {
    async close(timeout) {
      subscriber.off('ready', onReady)
      subscriber.off('close', listener.lost)
      subscriber.off('messageBuffer', onPayload)
      await shutdown(subscriber, () => subscriber.unsubscribe(channel), timeout)
      unwatch()
    },
  }
}

/**
 * The node a cluster's publishes go to: the master of the channel's slot, so one instance's classic
 * publishes keep their order (a cluster client sends a keyless command to any node), and a shard
 * channel is written as it is, without the cluster client's keyPrefix; the cluster client itself
 * while its slot map is not known.
 */
function slotMaster(cluster: Cluster, channel: string): Pick<Redis, 'publish' | 'spublish'> {
  const owner = cluster.slots[calculateSlot(channel)]?.[0]
  const node = owner === undefined ? undefined : cluster.nodes('master').find((n) => `${n.options.host}:${n.options.port}` === owner)
  return node ?? cluster
}

/**
 * Whether the cluster's servers have sharded pub/sub (`COMMAND INFO SSUBSCRIBE` names it), asked
 * again (backoff capped at 1 s) until the cluster answers: guessing classic while it is down would
 * leave this bus deaf to the sharded publishes of buses that asked when it was up.
 */
async function hasShardedPubSub(cluster: Cluster, closed: () => boolean): Promise<boolean> {
  for (let attempt = 1; ; attempt++) {
    try {
      const info = (await cluster.call('COMMAND', 'INFO', 'SSUBSCRIBE')) as unknown[]
      return Array.isArray(info) && Array.isArray(info[0])
    } catch (error) {
      if (closed()) throw error
      if (error instanceof Error && error.name === 'ReplyError') return false
      await new Promise((resolve) => setTimeout(resolve, backoff(attempt)))
    }
  }
}

/**
 * The subscription on a cluster: one plain connection of the bus's own to the master serving the
 * channel's slot (a `duplicate()` of the cluster's connection to it), `SSUBSCRIBE`d (or `SUBSCRIBE`d,
 * classic pub/sub reaching every node). It is never reconnected in place: when it drops, the slot
 * moves (`MOVED`) or the server ends the subscription (a `sunsubscribe` it did not ask for), it is
 * dropped and made again on the slot's master then, after the cluster refreshed its slot map; each
 * new confirmation after a loss is a gap.
 */
function clusterSubscription(cluster: Cluster, channel: string, sharded: boolean, listener: Listener): Subscription {
  const messageEvent = sharded ? 'smessageBuffer' : 'messageBuffer'
  const onPayload = (from: Buffer, payload: Buffer) => listener.payload(from, payload)
  // Written by connect and retarget only.
  let current: Redis | undefined
  let attempt = 0
  let retry: ReturnType<typeof setTimeout> | undefined

  /** The cluster's own connection to the master serving the channel's slot (sharded pub/sub hashes the channel as a key; classic pub/sub reaches every node, so that one is as good as any). */
  const slotOwner = (): Redis | undefined => {
    const owner = cluster.slots[calculateSlot(channel)]?.[0]
    return owner === undefined ? undefined : cluster.nodes('master').find((n) => nodeKey(n.options) === owner)
  }

  const retarget = (subscriber: Redis): void => {
    if (subscriber !== current) return
    current = undefined
    listener.lost()
    subscriber.removeAllListeners(messageEvent)
    subscriber.disconnect()
    if (listener.closed()) return
    attempt++
    // Let the cluster see the failover first: refresh its slot map, then connect where the slot is.
    retry = setTimeout(() => cluster.refreshSlotsCache(() => connect()), backoff(attempt))
  }

  const connect = (): void => {
    retry = undefined
    if (listener.closed()) return
    const owner = slotOwner()
    if (owner === undefined) {
      attempt++
      retry = setTimeout(connect, backoff(attempt))
      return
    }
    const subscriber = owner.duplicate({
      // Never reconnected in place: a new one is made where the slot is then.
      retryStrategy: () => null,
      autoResubscribe: false,
      enableOfflineQueue: true,
      lazyConnect: false,
      maxRetriesPerRequest: 1,
      connectTimeout: 1_000,
    })
    current = subscriber
    subscriber.on('error', (error: Error) => {
      // The server ended the sharded subscription (the slot moved): ioredis reports the unasked-for reply.
      if (/sunsubscribe/i.test(error.message)) retarget(subscriber)
    })
    subscriber.on('moved', () => retarget(subscriber))
    subscriber.on('close', () => retarget(subscriber))
    subscriber.on(messageEvent, onPayload)
    subscriber.on('ready', () => {
      const subscribing = sharded ? subscriber.ssubscribe(channel) : subscriber.subscribe(channel)
      subscribing.then(
        () => {
          if (subscriber !== current) return
          attempt = 0
          listener.confirmed()
        },
        () => retarget(subscriber),
      )
    })
  }

  const ready = cluster.status === 'ready' ? Promise.resolve() : new Promise<void>((resolve) => cluster.once('ready', () => resolve()))
  void ready.then(connect)

  return {
    async close(timeout) {
      if (retry !== undefined) clearTimeout(retry)
      const subscriber = current
      current = undefined
      if (subscriber === undefined) return
      subscriber.removeAllListeners(messageEvent)
      subscriber.removeAllListeners('close')
      subscriber.on('error', () => {})
      await shutdown(subscriber, () => (sharded ? subscriber.sunsubscribe(channel) : subscriber.unsubscribe(channel)), timeout)
    },
  }
}

/** Unsubscribes and quits a connection within `timeout` ms; drops it at once if it is not up, or then. */
async function shutdown(connection: Redis, unsubscribe: () => Promise<unknown>, timeout: number): Promise<void> {
  if (connection.status === 'ready' && (await settlesWithin((async () => (await unsubscribe(), await connection.quit()))(), timeout))) return
  connection.disconnect()
}
