/**
 * The seam between the Redis adapters and a Redis client library: everything `redisL2`, its leases
 * and `redisBus` need from a client, in one small interface, with one file per client
 * (`ioredis-driver.ts` for ioredis and its forks, `node-redis-driver.ts` for node-redis). The
 * adapters never touch a client's own API: keys, scripts, replies and messages are the same bytes
 * whichever client carries them.
 */
import { createHash } from 'node:crypto'

/** A Lua script the adapters run: its text, its SHA1 (for `EVALSHA`) and how many of its arguments are keys. */
export interface Script {
  /**
   * The name a client that installs scripts as commands gives it (ioredis's `defineCommand`): its
   * base name and the start of its SHA1, so two copies of the package (two releases under
   * `node_modules`) sharing one client never run each other's scripts under one name.
   */
  readonly name: string
  readonly lua: string
  readonly sha: string
  readonly keys: number
}

/** Makes a {@link Script} of `lua`, taking `keys` keys, installed as commands under `base` and its SHA1's start. */
export function script(base: string, lua: string, keys: number): Script {
  const sha = createHash('sha1').update(lua).digest('hex')
  return Object.freeze({ name: `${base}_${sha.slice(0, 12)}`, lua, keys, sha })
}

/** An argument of a command: numbers are sent as their decimal text. */
export type Arg = string | number | Buffer

/**
 * One command on the node serving its (first) key: a script with its keys and arguments (bulk
 * replies as Buffers when `buffers`), or a plain command (`SET`, `GET`, `DEL`) on one key.
 */
export type Call =
  | { readonly script: Script; readonly keys: readonly string[]; readonly args: readonly Arg[]; readonly buffers?: boolean }
  | { readonly command: 'GET' | 'SET' | 'DEL'; readonly key: string; readonly args: readonly Arg[] }

/** The key that routes a call. */
export function keyOf(call: Call): string {
  return 'script' in call ? call.keys[0]! : call.key
}

/** Where a driver reports its connection's outages: per node (`host:port`), or `''` for the client as a whole. */
export interface OutageReport {
  failed(node: string, error: unknown): void
  recovered(node: string): void
}

/** What a bus subscription tells the bus. */
export interface Listener {
  /** A payload arrived on channel `from`. */
  payload(from: Buffer, payload: Buffer): void
  /** Redis confirmed a (re)subscription: the first one, or one after a loss (a gap). */
  confirmed(): void
  /** The subscription dropped, moved or its connection reconnects: messages may be lost until the next confirmation. */
  lost(): void
  /** True once the bus is closed: make nothing new. */
  closed(): boolean
}

/**
 * A bus subscription a driver holds on connections of its own: closed (unsubscribed, quit) by
 * `close(timeout)`, gracefully for at most `timeout` ms, then dropped at once, so it always settles.
 */
export interface Subscription {
  close(timeout: number): Promise<void>
}

/**
 * A Redis client as the adapters use it. One driver wraps one client (given by the user, or opened by
 * EchoStore); it never closes the client itself (`quit` is called only for a client EchoStore opened).
 */
export interface Driver {
  /** Which client library: `ioredis` (and its forks) or `node-redis`. */
  readonly library: 'ioredis' | 'node-redis'
  /** True for a cluster client: calls go to the master of their key's slot. */
  readonly isCluster: boolean
  /**
   * Runs one call on the node serving its key; scripts by `EVALSHA`, `EVAL` on `NOSCRIPT` (per call: a
   * new or promoted master has no scripts). While the client is not ready it rejects at once with
   * {@link NotConnectedError} (never queued for later), so a call fails fast whatever the client's
   * own settings. The one wait: a client EchoStore opened itself (a `url`, `sentinels`) holds the
   * calls made before its first connect for it (`FAIL_FAST`'s offline queue, `maxRetriesPerRequest: 1`).
   */
  run(call: Call): Promise<unknown>
  /**
   * Runs many calls in one round trip per node; answers each reply, or each error, in order (a
   * failed call does not stop the others). Refused as `run` is while the client is not ready.
   */
  runMany(calls: readonly Call[]): Promise<({ error: Error } | { reply: unknown })[]>
  /** The master serving `key` (`host:port`) on a cluster whose slot map is known; undefined elsewhere. */
  masterOf(key: string): string | undefined
  /** True for an error Redis itself answered, as opposed to one of the connection. */
  isReply(error: unknown): boolean
  /** The `host:port` of a single-node client (for `echostore:l2` and span attributes); undefined for a cluster. */
  address(): string | undefined
  /** Where it connects, for messages: `host:port`, its seed nodes, or `sentinel master <name> (…)`. */
  where(): string
  /** The client's own key prefix (ioredis `keyPrefix`), written before every key it sends; `''` if none. */
  keyPrefix(): string
  /** True when the client had an `error` listener of its own (not one an adapter added: see {@link ownListener}) when the driver wrapped it. */
  hasErrorListener(): boolean
  /** Reports the client's outages and recoveries to `report` until the returned function is called. */
  watch(report: OutageReport): () => void
  /** Publishes `payload` on `channel`: `SPUBLISH` when `sharded` (on a cluster), else `PUBLISH` (on a cluster, to the master of the channel's slot). */
  publish(channel: string, payload: string, sharded: boolean): Promise<unknown>
  /** On a cluster: whether its servers have sharded pub/sub, asked until the cluster answers. */
  hasShardedPubSub(closed: () => boolean): Promise<boolean>
  /**
   * Subscribes to `channel` on a connection of its own (made from the client: `duplicate()`, or one
   * to the channel's slot master on a cluster), reporting to `listener`, and its outages to `report`.
   * Every loss of the subscription (a drop, a reconnect, a moved slot) is told to `listener.lost`
   * before the next confirmation: a client's silent resubscription is never relied on.
   */
  listen(channel: string, sharded: boolean, listener: Listener, report: OutageReport): Subscription
  /**
   * Closes the client (only for one EchoStore opened): gracefully when connected, for at most
   * `timeout` ms (a server that stopped answering never replies to `QUIT`), then at once; always settles.
   */
  quit(timeout: number): Promise<void>
}

/** The error of a call made while its connection is not ready: it is never queued. */
export class NotConnectedError extends Error {
  constructor(where: string) {
    super(`echostore: the connection to ${where} is not ready (a call is never queued while it is not: it fails at once)`)
    this.name = 'NotConnectedError'
  }
}

/** The mark of a listener an adapter added to a client: never counted as the client's own. */
const OWN = Symbol('echostore.listener')

/** Marks `listener` as one EchoStore added (see {@link userListenerCount}); answers it. */
export function ownListener<T extends (...args: never[]) => void>(listener: T): T {
  ;(listener as unknown as Record<symbol, true>)[OWN] = true
  return listener
}

/**
 * How many `event` listeners `emitter` has that EchoStore did not add: another adapter's listeners
 * on a client shared by `redisL2` and `redisBus` are not the user's.
 */
export function userListenerCount(emitter: { listenerCount(event: string): number; listeners?(event: string): unknown[] }, event: string): number {
  if (typeof emitter.listeners !== 'function') return emitter.listenerCount(event)
  return emitter.listeners(event).filter((listener) => (listener as Record<symbol, unknown> | undefined)?.[OWN] !== true).length
}

/**
 * Waits for `work` at most `ms`: true when it resolved in time, false when it rejected or ran out
 * (the caller then drops the connection at once). A rejection after it ran out is absorbed.
 */
export function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const ranOut = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)))
  const done = work.then(
    () => true,
    () => false,
  )
  return Promise.race([done, ranOut]).finally(() => clearTimeout(timer))
}

/** Backoff between attempts: 50 ms × the attempt, at most 1 s. */
export const backoff = (attempt: number): number => Math.min(attempt * 50, 1_000)

/** The start of an error message Redis itself answers (a reply, as opposed to a connection failure), whichever client carries it. */
export const REPLY_ERROR = /^(ERR|WRONGTYPE|NOSCRIPT|MOVED|ASK|CROSSSLOT|READONLY|CLUSTERDOWN|TRYAGAIN|LOADING|BUSY|OOM|NOPERM|NOAUTH|WRONGPASS)\b/
