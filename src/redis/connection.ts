/**
 * How `redisL2` and `redisBus` reach Redis: a client you give (ioredis `Redis` or `Cluster`, iovalkey's,
 * or node-redis's `createClient()`, `createCluster()` or `createSentinel()`), a url (one node, or
 * seed nodes; a cluster is detected), or Sentinel (`sentinels` + `name`). A url or Sentinel uses
 * ioredis when it is installed, else node-redis. The connections EchoStore opens itself use the
 * settings below; an outage of any connection is reported once (to `onError`, or as a process
 * warning) until it is back. What the adapters need of a client is a {@link Driver} (`driver.ts`).
 */
import type { ClusterOptions, RedisOptions } from 'ioredis'
import { ioredis, nodeRedis } from './peers.js'
import { neitherClient } from './require-peers.js'
import { RedisUnreachableError, badArgument, describe } from '../core/errors.js'
import type { Driver, OutageReport } from './driver.js'
import { ioredisDriver, isIoredisClient, type IoredisClient } from './ioredis-driver.js'
import { isNodeRedisClient, nodeRedisDriver, type NodeRedisClient } from './node-redis-driver.js'

export type { NodeRedisClient } from './node-redis-driver.js'

/**
 * An ioredis client EchoStore can use (a single-node, Sentinel or cluster client), or a client of
 * the same API: described by its shape ({@link CompatibleClient}), so a project that uses node-redis
 * alone type-checks these types with no ioredis installed.
 */
export type RedisClient = CompatibleClient

/**
 * The shape of a client of an ioredis fork that keeps ioredis's API, such as iovalkey's `Redis` and
 * `Cluster`: accepted as `client`, used exactly as an ioredis client.
 */
export interface CompatibleClient {
  /** Installs a Lua script as a command (the adapters' scripts). */
  defineCommand(name: string, definition: { lua: string; numberOfKeys?: number }): void
  /** Another connection of the same kind (the bus's subscriber). */
  duplicate(...args: never[]): unknown
  /** Listens to connection events (`error`, `ready`, `close`, messages). */
  // biome-ignore lint/suspicious/noExplicitAny: event listeners of any signature, as EventEmitter takes them
  on(event: string, listener: (...args: any[]) => void): unknown
  /** How many listeners an event has (a client without `error` listeners gets the adapter's warning). */
  listenerCount(event: string): number
  /** The connection's state: `ready` when it answers. */
  readonly status: string
  /** Closes the connection after pending replies. */
  quit(): Promise<unknown>
  /** Drops the connection at once. */
  disconnect(): void
}

/** One Sentinel of a Sentinel set. */
export interface SentinelAddress {
  host: string
  port: number
}

/** The keys of {@link RedisConnectionOptions}, as the adapters read their options (see `readOptions`). */
export const CONNECTION_OPTIONS = ['client', 'url', 'sentinels', 'name', 'onError'] as const

/** Where a Redis adapter connects: exactly one of `client`, `url` and `sentinels` (with `name`). */
export interface RedisConnectionOptions {
  /**
   * A client you made and connected: an ioredis `Redis` or `Cluster` (or a client of the same API, such
   * as iovalkey's), or a node-redis (v5+) client made by `createClient()`, `createCluster()` or
   * `createSentinel()`. The adapter never closes it: close it after the adapter's `close()`.
   */
  client?: RedisClient | NodeRedisClient
  /**
   * A Redis URL (`redis://[user:password@]host:port[/db]`, `rediss://` for TLS), or the URLs of a
   * cluster's seed nodes, opened with ioredis when it is installed, else node-redis. The adapter asks the first node that answers whether cluster mode is on,
   * and opens a `Cluster` over every url given when it is; it closes what it opened in `close()`.
   */
  url?: string | readonly string[]
  /** The Sentinels to ask for the master of `name`; the connection follows a failover. */
  sentinels?: readonly SentinelAddress[]
  /** The Sentinel master name (with `sentinels` only). */
  name?: string
  /**
   * Receives each outage of a connection the adapter uses, once per outage (the first error; the
   * next one after the connection was back). Default: a process warning (`ECHOSTORE_REDIS_UNREACHABLE`).
   * Errors of a client you give are reported only when it had no `error` listener of its own.
   */
  onError?: (error: unknown) => void
}

/**
 * Options for a single-node connection EchoStore opens itself, chosen to fail fast and never crash:
 * - the offline queue stays on, so calls made before the first connect wait for it instead of failing
 *   at startup; `maxRetriesPerRequest: 1` bounds that wait (queued commands are rejected at every
 *   second failed reconnect: within a few hundred ms early in an outage, ~2 s at most once the
 *   backoff is capped). Once connected, an L2 call while the connection is not ready is refused at
 *   once by the driver (never queued); a publish still waits in the queue;
 * - reconnects go on forever with a backoff capped at 1 s, so L2 comes back by itself;
 * - `connectTimeout: 1000` bounds a connect that hangs (a black-holed host);
 * - a `READONLY` reply (a master demoted by a failover under the connection) reconnects and resends,
 *   so a Sentinel connection follows the new master.
 * The table's facade still puts its own short timeout on every call.
 */
export const FAIL_FAST = {
  maxRetriesPerRequest: 1,
  enableOfflineQueue: true,
  connectTimeout: 1_000,
  /** Reconnect after 50 ms × the attempt, at most 1 s, forever. */
  retryStrategy: (attempt: number) => Math.min(attempt * 50, 1_000),
  /** On `READONLY` (a demoted master), reconnect and resend the command. */
  reconnectOnError: (error: Error) => (error.message.startsWith('READONLY') ? 2 : false),
} as const satisfies RedisOptions

/**
 * Options for a cluster connection EchoStore opens itself: each node's connection as
 * {@link FAIL_FAST}; the slot map refreshed within 1 s of a failover (and every 5 s), commands
 * redirected up to 16 times and retried 100 ms after a `CLUSTERDOWN` or a failover; reads and
 * writes on masters only (a replica may lag behind a version guard).
 */
export const CLUSTER_FAIL_FAST = {
  enableOfflineQueue: true,
  /** Reconnect to the cluster after 50 ms × the attempt, at most 1 s, forever. */
  clusterRetryStrategy: (attempt: number) => Math.min(attempt * 50, 1_000),
  maxRedirections: 16,
  retryDelayOnFailover: 100,
  retryDelayOnClusterDown: 100,
  retryDelayOnTryAgain: 100,
  slotsRefreshTimeout: 1_000,
  slotsRefreshInterval: 5_000,
  scaleReads: 'master',
} as const satisfies ClusterOptions

/**
 * Options for a node-redis connection EchoStore opens itself (node-redis has no ioredis, or a url
 * given with only node-redis installed), and the ones it recommends for a node-redis client you
 * give: a connect that hangs gives up after 1 s, reconnects go on forever after 50 ms × the attempt
 * (at most 1 s), at most 10 000 commands wait for a connection (the offline queue is otherwise
 * unbounded), and the commands of a turn leave together (see `socket.writableHighWaterMark`). The
 * adapters never let an L2 call wait in the offline queue, whatever the settings.
 */
export const NODE_REDIS_FAIL_FAST = {
  socket: {
    connectTimeout: 1_000,
    /** Reconnect after 50 ms × the attempt, at most 1 s, forever. */
    reconnectStrategy: (retries: number) => Math.min((retries + 1) * 50, 1_000),
    /**
     * Bytes the socket may hold before node-redis stops writing a turn's commands and waits for
     * `'drain'` and a later turn to write the rest: 4 MiB, a full command queue of scripted calls.
     * At Node's default (16 KiB, about 48 L2 calls) a burst of misses leaves a few dozen calls per
     * loop turn, and those written late time out behind the busy turns that answer the first.
     */
    writableHighWaterMark: 4 * 1024 * 1024,
  },
  commandsQueueMaxLength: 10_000,
} as const

/** A connection an adapter uses: its client's driver (once known), and what went wrong while it is down. */
export interface Connection {
  /** The driver: at once for a given client or Sentinel; for a url, once a node said whether it is a cluster. */
  readonly driver: Promise<Driver>
  /** The driver when known, else undefined. */
  current(): Driver | undefined
  /** Settles once the url's node was first asked what it is (answered or not); at once otherwise. */
  readonly asked: Promise<void>
  /** Where it connects, for messages: `host:port`, its seed nodes, or `sentinel master <name>`. */
  readonly where: string
  /** The error of the outage going on (of the node `node`, `host:port`, on a cluster), or undefined while up. */
  cause(node?: string): Error | undefined
  /** Where the connections made from this one (the bus's subscriber) report their outages. */
  readonly report: OutageReport
  /**
   * Closes the connections it opened (not a given client): gracefully for at most the adapter's
   * close bound, then at once, so it settles even while the server does not answer. Idempotent.
   */
  close(): Promise<void>
}

/**
 * A `url` option as a message shows it: {@link describe}, with the user info's password masked
 * (`redis://app:***@host`): everything after the scheme up to the last `@`, but a user name before a
 * `:`, is shown as `***`, however malformed the rest (a lone user info may be a password).
 */
function showUrl(url: unknown): string {
  if (typeof url !== 'string') return describe(url)
  const at = url.lastIndexOf('@')
  if (at < 0) return describe(url)
  const from = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/*/.exec(url)?.[0].length ?? 0
  const userInfo = url.slice(Math.min(from, at), at)
  const colon = userInfo.indexOf(':')
  return describe(`${url.slice(0, Math.min(from, at))}${colon < 0 ? '***' : `${userInfo.slice(0, colon)}:***`}${url.slice(at)}`)
}

/** Throws a `TypeError` naming the option when the connection options are not exactly one of `client`, `url` and `sentinels`. */
export function validateConnection(adapter: string, options: RedisConnectionOptions): void {
  const { client, url, sentinels, name, onError } = options
  const given = [client !== undefined && '`client`', url !== undefined && '`url`', sentinels !== undefined && '`sentinels`'].filter(Boolean)
  if (given.length !== 1) {
    throw badArgument(TypeError, `${adapter}: pass exactly one of the options \`client\`, \`url\` and \`sentinels\`, got ${given.length === 0 ? 'neither' : given.join(' and ')}`)
  }
  if (client !== undefined && !isIoredisClient(client) && !isNodeRedisClient(client)) {
    throw badArgument(
      TypeError,
      `${adapter}: the option \`client\` must be an ioredis Redis or Cluster client, or a node-redis client made by createClient(), createCluster() or createSentinel(), got ${describe(client)}`,
    )
  }
  if (client === undefined && ioredis === undefined && nodeRedis === undefined) throw neitherClient(adapter)
  if (url !== undefined) {
    const rule = 'must be a redis:// or rediss:// URL (redis://[user:password@]host:port[/db]), or a non-empty array of them'
    const urls = typeof url === 'string' ? [url] : url
    if (!Array.isArray(urls) || urls.length === 0) throw badArgument(TypeError, `${adapter}: the option \`url\` ${rule}, got ${showUrl(url)}`)
    const bad = urls.findIndex((u) => typeof u !== 'string' || !/^rediss?:\/\/./.test(u) || !parses(u))
    if (bad >= 0) {
      const which = typeof url === 'string' ? '`url`' : `\`url\` (its entry ${bad})`
      throw badArgument(TypeError, `${adapter}: the option ${which} ${rule}, got ${showUrl(urls[bad])}`)
    }
  }
  if (sentinels !== undefined) {
    const fit = Array.isArray(sentinels) && sentinels.length > 0 && sentinels.every((s) => typeof s?.host === 'string' && s.host !== '' && Number.isInteger(s?.port) && s.port > 0 && s.port < 65_536)
    if (!fit) throw badArgument(TypeError, `${adapter}: the option \`sentinels\` must be a non-empty array of { host, port }, got ${describe(sentinels)}`)
    if (typeof name !== 'string' || name === '') throw badArgument(TypeError, `${adapter}: the option \`name\` (the Sentinel master name) must be a non-empty string, got ${describe(name)}`)
  } else if (name !== undefined) {
    throw badArgument(TypeError, `${adapter}: the option \`name\` goes with \`sentinels\` only`)
  }
  if (onError !== undefined && typeof onError !== 'function') {
    throw badArgument(TypeError, `${adapter}: the option \`onError\` must be a function, got ${describe(onError)}`)
  }
}

/** Reports outages once each: the first error after the connection was up (or never up), to `onError` or as a process warning. */
class Outages implements OutageReport {
  /** Written by `failed` and `recovered` only. */
  #causes = new Map<string, Error>()
  constructor(
    private readonly adapter: string,
    private readonly where: string,
    private readonly onError: ((error: unknown) => void) | undefined,
    private readonly report: boolean,
  ) {}

  failed(node: string, error: unknown): void {
    const cause = error instanceof Error ? error : new Error(String(error))
    const known = this.#causes.size > 0
    this.#causes.set(node, cause)
    if (known || !this.report) return
    if (this.onError !== undefined) {
      try {
        this.onError(error)
      } catch {
        // A failing reporter must not crash the connection's event loop.
      }
      return
    }
    const warning = new RedisUnreachableError(this.adapter, node === '' ? this.where : node, 'is unreachable (reported once until it is back; pass onError to handle it)', { cause })
    process.emitWarning(warning.message, { type: 'EchoStoreWarning', code: warning.code })
  }

  recovered(node: string): void {
    this.#causes.delete(node)
  }

  cause(node: string | undefined): Error | undefined {
    if (node !== undefined && this.#causes.has(node)) return this.#causes.get(node)
    return this.#causes.get('') ?? (node === undefined ? this.#causes.values().next().value : undefined)
  }
}

const nodeKey = (options: { host?: string; port?: number }): string => `${options.host ?? '127.0.0.1'}:${options.port ?? 6379}`

/** True when `url` parses as {@link parseUrl} reads it: a URL whose user name and password decode (a stray `%` does not). */
function parses(url: string): boolean {
  try {
    parseUrl(url)
    return true
  } catch {
    return false
  }
}

/** `host:port` and the connection options one url carries. */
function parseUrl(url: string): { host: string; port: number; options: RedisOptions } {
  const parsed = new URL(url)
  const options: RedisOptions = {}
  if (parsed.username !== '') options.username = decodeURIComponent(parsed.username)
  if (parsed.password !== '') options.password = decodeURIComponent(parsed.password)
  if (parsed.protocol === 'rediss:') options.tls = {}
  return { host: parsed.hostname.replace(/^\[|\]$/g, ''), port: parsed.port === '' ? 6379 : Number(parsed.port), options }
}

/** Sleeps `ms`, or until `wake` is called (close() ends the waits of a connection being made). */
function pause(ms: number, onWake: (wake: () => void) => void): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms)
    onWake(() => (clearTimeout(timer), resolve()))
  })
}

/**
 * Whether the Redis at `url` runs in cluster mode (its `INFO cluster`), asked with the library the url
 * uses; rejects when it cannot be asked. `onProbe` is given the function that drops the probe's
 * connection at once (close() calls it: a server that stopped answering never replies).
 */
async function isClusterNode(url: string, onProbe: (drop: () => void) => void): Promise<boolean> {
  if (ioredis !== undefined) {
    const probe = new ioredis.Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, connectTimeout: 1_000, retryStrategy: () => null })
    onProbe(() => probe.disconnect())
    // The connection's own error (ECONNREFUSED, …) says more than the "Connection is closed" connect() rejects with.
    let failure: unknown
    probe.on('error', (error: unknown) => (failure ??= error))
    try {
      await probe.connect()
      return /cluster_enabled:1/.test(await probe.info('cluster'))
    } catch (error) {
      throw failure ?? error
    } finally {
      probe.disconnect()
    }
  }
  const probe = nodeRedis!.createClient({ url, socket: { connectTimeout: 1_000, reconnectStrategy: false } })
  onProbe(() => {
    if (probe.isOpen) probe.destroy()
  })
  let failure: unknown
  probe.on('error', (error: unknown) => (failure ??= error))
  try {
    await probe.connect()
    return /cluster_enabled:1/.test(String(await probe.sendCommand(['INFO', 'cluster'])))
  } catch (error) {
    throw failure ?? error
  } finally {
    if (probe.isOpen) probe.destroy()
  }
}

/**
 * Opens a client of the library a url or Sentinel uses (ioredis when installed, else node-redis):
 * Sentinel, a cluster whose nodes the urls name, or one node. A node-redis client is connected here, again
 * and again (backoff capped at 1 s) while a cluster's seeds do not answer, until `closed()`.
 */
function openClient(
  urls: readonly string[],
  sentinels: readonly SentinelAddress[] | undefined,
  name: string | undefined,
  cluster: boolean | undefined,
  closed: () => boolean,
): { driver: Driver; connected: Promise<void> } {
  if (ioredis !== undefined) {
    let client: IoredisClient
    if (sentinels !== undefined) {
      client = new ioredis.Redis({ ...FAIL_FAST, sentinels: sentinels.map(({ host, port }) => ({ host, port })), name, failoverDetector: true, sentinelRetryStrategy: FAIL_FAST.retryStrategy })
    } else if (cluster === true) {
      const seeds = urls.map(parseUrl)
      client = new ioredis.Cluster(
        seeds.map(({ host, port }) => ({ host, port })),
        { ...CLUSTER_FAIL_FAST, redisOptions: { ...FAIL_FAST, ...seeds[0]!.options } },
      )
    } else {
      client = new ioredis.Redis(urls[0]!, FAIL_FAST)
    }
    return { driver: ioredisDriver(client, { opened: true }), connected: Promise.resolve() }
  }
  const redis = nodeRedis!
  let client: { connect(): Promise<unknown>; isOpen: boolean }
  if (sentinels !== undefined) {
    client = redis.createSentinel({
      name: name!,
      sentinelRootNodes: sentinels.map(({ host, port }) => ({ host, port })),
      nodeClientOptions: NODE_REDIS_FAIL_FAST,
      sentinelClientOptions: NODE_REDIS_FAIL_FAST,
    })
  } else if (cluster === true) {
    const { username, password, tls } = parseUrl(urls[0]!).options
    // The defaults reach the nodes the slot map names, not only the nodes the urls name: TLS too, for a rediss:// url.
    const socket = tls === undefined ? NODE_REDIS_FAIL_FAST.socket : { ...NODE_REDIS_FAIL_FAST.socket, tls: true as const }
    client = redis.createCluster({
      rootNodes: urls.map((url) => ({ url })),
      defaults: { ...NODE_REDIS_FAIL_FAST, socket, ...(username === undefined ? {} : { username }), ...(password === undefined ? {} : { password }) },
    })
  } else {
    client = redis.createClient({ url: urls[0]!, ...NODE_REDIS_FAIL_FAST })
  }
  const driver = nodeRedisDriver(client as unknown as NodeRedisClient)
  const connected = (async () => {
    for (let attempt = 1; !closed(); attempt++) {
      try {
        await client.connect()
        return
      } catch {
        // A cluster's seeds did not answer (a single node reconnects by itself): try again.
        if (client.isOpen) return
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(attempt * 50, 1_000)))
    }
  })()
  return { driver, connected }
}

/**
 * Opens (or wraps) the connection the options describe. Never throws nor rejects for an outage: a url
 * that does not answer is asked again, with a backoff capped at 1 s, until it answers or `close()`.
 * `closeTimeout` (ms) bounds each graceful close of a connection it opened; past it, the connection
 * is dropped at once.
 */
export function openConnection(adapter: string, options: RedisConnectionOptions, closeTimeout: number): Connection {
  const { url, sentinels, name, onError } = options
  const givenDriver = options.client === undefined ? undefined : isNodeRedisClient(options.client) ? nodeRedisDriver(options.client) : ioredisDriver(options.client as IoredisClient)
  const urls = url === undefined ? [] : typeof url === 'string' ? [url] : [...url]
  const where =
    givenDriver !== undefined ? givenDriver.where() : sentinels !== undefined ? `sentinel master ${name} (${sentinels.map(nodeKey).join(', ')})` : urls.map((u) => nodeKey(parseUrl(u))).join(', ')
  const outages = new Outages(adapter, where, onError, givenDriver === undefined || !givenDriver.hasErrorListener())
  // Written by make and close only.
  const opened: Driver[] = []
  let closed = false
  let known: Driver | undefined
  let cluster: boolean | undefined
  let wakeDetection: (() => void) | undefined
  let dropProbe: (() => void) | undefined
  let markAsked!: () => void
  const asked = new Promise<void>((resolve) => (markAsked = resolve))

  const make = (): Driver => {
    const { driver } = openClient(urls, sentinels, name, cluster, () => closed)
    // Listening before connecting: an error nobody listens to would crash the process.
    driver.watch(outages)
    opened.push(driver)
    return driver
  }

  const detect = async (): Promise<Driver> => {
    for (let attempt = 0; !closed; attempt++) {
      const seed = urls[attempt % urls.length]!
      try {
        cluster = await isClusterNode(seed, (drop) => (dropProbe = drop))
        if (closed) break
        known = make()
        for (const url of urls) outages.recovered(nodeKey(parseUrl(url)))
        return known
      } catch (error) {
        if (closed) break
        outages.failed(nodeKey(parseUrl(seed)), error)
      } finally {
        dropProbe = undefined
        markAsked()
      }
      if (closed) break
      await pause(Math.min((attempt + 1) * 50, 1_000), (wake) => (wakeDetection = wake))
    }
    throw new RedisUnreachableError(adapter, where, 'was closed before it connected')
  }

  // Stops listening to the given client on close: it outlives the adapter.
  let unwatchGiven = (): void => {}
  if (givenDriver !== undefined) {
    unwatchGiven = givenDriver.watch(outages)
    known = givenDriver
  } else if (sentinels !== undefined) {
    known = make()
  }
  if (known !== undefined) markAsked()
  const driver = known !== undefined ? Promise.resolve(known) : detect()
  driver.catch(() => {})

  return {
    driver,
    where,
    asked,
    report: outages,
    current: () => known,
    cause: (node) => outages.cause(node),
    async close(): Promise<void> {
      if (closed) return
      closed = true
      wakeDetection?.()
      dropProbe?.()
      await Promise.all(opened.map((d) => d.quit(closeTimeout)))
      unwatchGiven()
    },
  }
}
