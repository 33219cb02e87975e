/**
 * A project that installs ioredis and uses echostore/redis against the test Redis (REDIS_URL, default
 * redis://127.0.0.1:6379): two tables share a Redis L2 and a Redis bus under a key prefix and channel
 * of their own. The herd costs one load, the second table is answered by L2, an invalidation
 * reaches it over the bus; then the keys are deleted and every connection is closed, so the
 * process exits by itself.
 */
import { randomBytes } from 'node:crypto'
import { createTable } from 'echostore'
import { redisBus, redisL2 } from 'echostore/redis'
import { Redis } from 'ioredis'
import { assertHerdOfOne } from './herd.mjs'

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
const run = randomBytes(6).toString('hex')
const prefix = `echostore-pack-test:${run}:`
const channel = `echostore-pack-test:${run}:coherence`

/** One process's worth of EchoStore: its own L2 store and bus connections. */
async function instance() {
  const l2 = redisL2({ url, prefix })
  const bus = redisBus({ url, channel })
  await bus.subscribed()
  return { l2, bus, table: createTable({ name: 'sets', ttl: 60_000, l2, bus }) }
}

const a = await instance()
const b = await instance()
const admin = new Redis(url, { maxRetriesPerRequest: 1 })
try {
  await assertHerdOfOne(a.table, 'redis')
  const fromL2 = await b.table.fetch('cold', () => {
    throw new Error('redis: the second table called its loader; L2 should have answered')
  })
  if (fromL2?.by !== 'redis' || b.table.stats().l2_hits !== 1) throw new Error(`redis: the second table was not answered by L2 (${JSON.stringify(b.table.stats())})`)
  const heard = new Promise((resolve) => b.table.events.on('coherence', resolve))
  const change = await a.table.invalidate('cold')
  if (!change.broadcast || change.l2 !== 'written') throw new Error(`redis: invalidate answered ${JSON.stringify(change)}`)
  await heard
  console.log('pass redis: the second table was answered by the Redis L2, and heard the invalidation on the Redis bus')
} finally {
  for (const { table, l2, bus } of [a, b]) {
    await table.close()
    await l2.close()
    await bus.close()
  }
  let cursor = '0'
  do {
    const [next, keys] = await admin.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500)
    cursor = next
    if (keys.length > 0) await admin.del(...keys)
  } while (cursor !== '0')
  await admin.quit()
}
