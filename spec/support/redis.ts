import { randomBytes } from 'node:crypto'
import { type Cluster, Redis } from 'ioredis'
import { afterAll, beforeAll, describe } from 'vitest'
import type { Id } from '../../src/core/id.js'
import { l2Key, leaseKey } from '../../src/l2/keys.js'

/** The Redis the tests use: `REDIS_URL`, or the machine's server on 127.0.0.1:6379. */
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'

const HOW_TO_START = 'start one with: redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no ' + '(or set REDIS_URL)'

/** True when the Redis at `url` answers PING within `connectTimeout` ms. */
export async function pings(url: string, connectTimeout: number): Promise<boolean> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout, retryStrategy: () => null })
  client.on('error', () => {})
  try {
    await client.connect()
    return (await client.ping()) === 'PONG'
  } catch {
    return false
  } finally {
    client.disconnect()
  }
}

/** Whether Redis answers; decided once, at import, by top-level await. */
export const redisUp = await pings(REDIS_URL, 1_000)

/**
 * `describe` for suites that need a real Redis. Under `CI=true` they always run (and fail loudly
 * when Redis is down); elsewhere, without Redis, they skip with a message saying how to start one.
 */
export const describeRedis: typeof describe = ((name: string, fn: () => void) => {
  if (redisUp || process.env.CI === 'true') return describe(name, fn)
  console.warn(`[skip] "${name}" needs Redis at ${REDIS_URL}: ${HOW_TO_START}`)
  return describe.skip(name, fn)
}) as typeof describe

/** A fresh key prefix per run, so parallel runs never share keys. */
export function testPrefix(label: string): string {
  return `echostore-test:${label}:${randomBytes(6).toString('hex')}:`
}

/** Every key under `prefix`, sorted (SCAN, never KEYS). */
export async function keysUnder(client: Redis, prefix: string): Promise<string[]> {
  const keys: string[] = []
  let cursor = '0'
  do {
    const [next, batch] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500)
    cursor = next
    keys.push(...batch)
  } while (cursor !== '0')
  return keys.sort()
}

/** Deletes every key under `prefix` (SCAN, never KEYS). */
export async function cleanPrefix(client: Redis, prefix: string): Promise<void> {
  let cursor = '0'
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500)
    cursor = next
    // One DEL per key: on a Cluster node the keys of one scan span many slots.
    if (keys.length > 0) await client.pipeline(keys.map((key) => ['del', key])).exec()
  } while (cursor !== '0')
}

/**
 * A plain client for the current suite: opened before its tests, closed after them (once every key
 * under `prefix`, when given, is deleted). Call the returned function inside tests.
 */
export function suiteRedis(prefix?: string): () => Redis {
  let client: Redis | undefined
  beforeAll(() => {
    client = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 })
    client.on('error', () => {})
  })
  afterAll(async () => {
    if (client === undefined) return
    if (prefix !== undefined) await cleanPrefix(client, prefix)
    await client.quit()
  })
  return () => {
    if (client === undefined) throw new Error('suiteRedis: the client exists only while the suite runs')
    return client
  }
}

/**
 * The L2 contract's clock for a Redis store under `prefix`, through an admin connection: `expire`
 * and `expireLease` delete a key as its expiry would (PEXPIREAT in the past), `age` shortens an
 * entry's life by `ms`. No waiting.
 */
export function redisKeyClock(admin: () => Redis | Cluster, prefix: string) {
  return {
    expire: async (table: string, id: Id): Promise<void> => void (await admin().pexpireat(l2Key(prefix, table, id), 1)),
    age: async (table: string, id: Id, ms: number): Promise<void> => {
      const key = l2Key(prefix, table, id)
      const left = await admin().pttl(key)
      if (left <= ms) await admin().del(key)
      else await admin().pexpire(key, left - ms)
    },
    expireLease: async (table: string, id: Id): Promise<void> => void (await admin().pexpireat(leaseKey(prefix, table, id), 1)),
  }
}
