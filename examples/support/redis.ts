/**
 * Redis helpers for the examples: the URL, a reachability check that ends the process with a clear
 * message, and the clean-up of a run's own key prefix.
 */
import { Redis } from 'ioredis'

/** The Redis the examples use: `REDIS_URL`, default redis://127.0.0.1:6379. */
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'

/** Returns when Redis answers PING; otherwise prints how to start one and exits with status 1. */
export async function requireRedis(example: string): Promise<void> {
  const probe = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 1_000, retryStrategy: () => null })
  let why = ''
  probe.on('error', (error: Error) => (why ||= error.message))
  try {
    await probe.connect()
    if ((await probe.ping()) === 'PONG') return
  } catch (error) {
    why ||= error instanceof Error ? error.message : String(error)
  } finally {
    probe.disconnect()
  }
  console.error(
    `${example} needs Redis at ${REDIS_URL}, which did not answer (${why || 'no PONG'}).\n` +
      'Start one with:  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no\n' +
      '(or: docker run --rm -p 6379:6379 redis:7), or point REDIS_URL at yours, then run again.',
  )
  process.exit(1)
}

/** Deletes every key under `prefix` through `client` (SCAN, never KEYS); returns how many it deleted. */
export async function deleteKeys(client: Redis, prefix: string): Promise<number> {
  let deleted = 0
  let cursor = '0'
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500)
    cursor = next
    if (keys.length > 0) deleted += await client.del(...keys)
  } while (cursor !== '0')
  return deleted
}

/** Deletes every key under `prefix` on `REDIS_URL`, through a connection of its own; returns how many. */
export async function deletePrefix(prefix: string): Promise<number> {
  const client = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 })
  client.on('error', () => {})
  try {
    return await deleteKeys(client, prefix)
  } finally {
    await client.quit().catch(() => client.disconnect())
  }
}
