/**
 * A service that already holds a node-redis client (the `redis` package) gives it to EchoStore, and
 * shares one L2 and one bus with an instance still on ioredis: the move from one client to the
 * other, one instance at a time.
 *
 *  1. Instance A (node-redis: `createClient()` with `NODE_REDIS_FAIL_FAST`, an `error` listener,
 *     connected) reads a cold id with a herd of 100 callers: one loader call, written to Redis.
 *  2. Instance B (ioredis, same prefix, table name and bus namespace) reads the same id: an L2 hit,
 *     no loader call.
 *  3. A puts a new value; B hears the change on the bus and its next read answers the new value
 *     from L2.
 *  4. Everything is closed in order (tables, then L2s and buses, then the clients, which EchoStore
 *     never closes), the keys under this run's prefix are deleted, and a last line
 *     `RESULT {"prefix":..,"a":{stats},"b":{stats},"bHeard":..,"bAfter":..}` is printed
 *     (spec/examples-node-redis.spec.ts checks it).
 *
 * Run: `npx tsx examples/node-redis.ts` (Redis at `REDIS_URL`, default redis://127.0.0.1:6379).
 * Without a reachable Redis it prints how to start one and exits with status 1.
 */
import { randomBytes } from 'node:crypto'
import { Redis } from 'ioredis'
import { createClient } from 'redis'
import { createTable } from 'echostore'
import { NODE_REDIS_FAIL_FAST, redisBus, redisL2 } from 'echostore/redis'
import { counterLine } from './support/readout.js'
import { REDIS_URL, deletePrefix, requireRedis } from './support/redis.js'

type Price = { sku: string; cents: number }

await requireRedis('examples/node-redis.ts')
const prefix = `echostore-example:node-redis:${randomBytes(6).toString('hex')}:`
let originCalls = 0
const loadPrice = async (sku: string): Promise<Price> => {
  originCalls++
  await new Promise((resolve) => setTimeout(resolve, 20))
  return { sku, cents: 1_999 }
}

// Instance A: node-redis. The client is yours: made, listened to and connected before EchoStore uses it.
const nodeRedis = createClient({ url: REDIS_URL, ...NODE_REDIS_FAIL_FAST })
nodeRedis.on('error', (error) => console.warn('node-redis', error.message)) // an unheard error would crash the process
await nodeRedis.connect()
const l2A = redisL2({ client: nodeRedis, prefix })
const busA = redisBus({ client: nodeRedis, namespace: prefix })

// Instance B: ioredis, the same key space and bus namespace.
const ioredis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1, connectTimeout: 1_000 })
ioredis.on('error', () => {})
await ioredis.ping()
const l2B = redisL2({ client: ioredis, prefix })
const busB = redisBus({ client: ioredis, namespace: prefix })
await Promise.all([busA.subscribed({ timeout: 5_000 }), busB.subscribed({ timeout: 5_000 })])

const a = createTable<Price>({ name: 'prices', ttl: 60_000, l2: l2A, bus: busA })
const b = createTable<Price>({ name: 'prices', ttl: 60_000, l2: l2B, bus: busB })

const herd = await Promise.all(Array.from({ length: 100 }, () => a.fetch('sku-1', loadPrice)))
console.log(`A (node-redis): ${herd.length} callers, origin calls: ${originCalls}`)
const fromB = await b.fetch('sku-1', loadPrice)
console.log(`B (ioredis):    read ${fromB.cents} cents, origin calls still ${originCalls} (an L2 hit)`)

const heard = new Promise<void>((resolve) => busB.subscribe((d) => d.type === 'message' && resolve()))
await a.put('sku-1', { sku: 'sku-1', cents: 2_499 })
await heard
const after = await b.fetch('sku-1', loadPrice)
console.log(`A put 2499 cents; B heard it on the bus and now reads ${after.cents} cents`)
console.log(`A  ${counterLine(a.stats())}`)
console.log(`B  ${counterLine(b.stats())}`)
const result = { prefix, a: a.stats(), b: b.stats(), bHeard: true, bAfter: after.cents, originCalls }

await Promise.all([a.close(), b.close()])
await Promise.all([l2A.close(), busA.close(), l2B.close(), busB.close()])
await nodeRedis.close()
await ioredis.quit()
await deletePrefix(prefix)
console.log(`RESULT ${JSON.stringify(result)}`)
