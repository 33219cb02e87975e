import { randomBytes } from 'node:crypto'
import { Redis } from 'ioredis'
import type { NodeRedisClient } from '../../src/redis.js'

/**
 * Redis helpers for W8: a reachability probe that never throws, a connected client, a run's own
 * random key prefix, and the SCAN+DEL clean-up of that prefix. (The bench keeps its own copy
 * rather than importing examples/support/redis.ts, whose probe ends the process.)
 */

/** Why Redis at `url` did not answer PING within ~1 s, or undefined when it did. */
export async function redisUnreachable(url: string): Promise<string | undefined> {
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 1_000, retryStrategy: () => null })
  let why = ''
  probe.on('error', (error: Error) => (why ||= error.message))
  try {
    await probe.connect()
    const answer = await probe.ping()
    return answer === 'PONG' ? undefined : `PING answered ${JSON.stringify(answer)}`
  } catch (error) {
    return why || (error instanceof Error ? error.message : String(error)) || 'no answer'
  } finally {
    probe.disconnect()
  }
}

/**
 * A client on its own connection, already answering (PING awaited), failing fast in an outage
 * (one retry per request, 1 s connect timeout). Errors reach the caller as failed calls; the
 * table counts them.
 */
export async function connectRedis(url: string): Promise<Redis> {
  const client = new Redis(url, { maxRetriesPerRequest: 1, connectTimeout: 1_000 })
  client.on('error', () => {})
  try {
    await client.ping()
  } catch (error) {
    client.disconnect()
    throw error
  }
  return client
}

/** Closes a client politely, or drops it when QUIT does not go through. */
export async function quitRedis(client: Redis): Promise<void> {
  await client.quit().catch(() => client.disconnect())
}

/** The Redis clients the bench can hand EchoStore's Redis adapters. */
export const REDIS_CLIENTS = ['ioredis', 'node-redis'] as const
/** One of {@link REDIS_CLIENTS}. */
export type RedisClientName = (typeof REDIS_CLIENTS)[number]

/** A connected client of either kind, to pass as `client` to `redisL2` / `redisBus`, and how to close it (after the adapters). */
export interface BenchClient {
  client: Redis | NodeRedisClient
  close(): Promise<void>
}

/**
 * A client of the named kind on its own connection, already answering: ioredis as
 * {@link connectRedis} makes it, node-redis with `createClient({ url, ...NODE_REDIS_FAIL_FAST })` and
 * `connect()` (the options the README recommends for a node-redis client: 1 s connect timeout).
 */
export async function connectClient(name: RedisClientName, url: string): Promise<BenchClient> {
  if (name === 'ioredis') {
    const client = await connectRedis(url)
    return { client, close: () => quitRedis(client) }
  }
  // Loaded only when a node-redis client is asked for.
  const [{ createClient }, { NODE_REDIS_FAIL_FAST }] = await Promise.all([import('redis'), import('../../src/redis.js')])
  const client = createClient({ url, ...NODE_REDIS_FAIL_FAST })
  client.on('error', () => {})
  await client.connect()
  return { client, close: () => client.close().catch(() => client.destroy()) }
}

/** `name` as a {@link RedisClientName}, or a clear error. */
export function redisClientName(name: string): RedisClientName {
  if ((REDIS_CLIENTS as readonly string[]).includes(name)) return name as RedisClientName
  throw new Error(`unknown Redis client ${JSON.stringify(name)}: use ${REDIS_CLIENTS.join(' or ')}`)
}

/** A fresh key prefix for one run: `echostore-bench:<tag>:<12 hex>:`. */
export function runPrefix(tag: string): string {
  return `echostore-bench:${tag}:${randomBytes(6).toString('hex')}:`
}

/** Deletes every key under `prefix` (SCAN, never KEYS); returns how many it deleted. Shared with the examples. */
export { deleteKeys as deletePrefix } from '../../examples/support/redis.js'

/** The server's `redis_version`, or 'unknown'. */
export async function redisVersion(client: Redis): Promise<string> {
  try {
    const info = await client.info('server')
    return /redis_version:([^\r\n]+)/.exec(info)?.[1] ?? 'unknown'
  } catch {
    return 'unknown'
  }
}
