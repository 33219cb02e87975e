/**
 * The two Redis clients side by side, in one run, on one Redis (`REDIS_URL`): for ioredis and for
 * node-redis (RESP2 and RESP3), W8a's L2-hit fill latency (a table with a cold L1 reading ids another
 * table filled: one script call and a decode) and the round trips one miss costs (a cold read, a
 * loader, the write-back), counted from `INFO commandstats`. The cases
 * interleave per repetition, so a drift of the machine touches every client alike.
 *
 * Run: `npx tsx bench/clients.ts` (scale with `BENCH_SCALE`, default 1). Prints a markdown table.
 */
import { performance } from 'node:perf_hooks'
import { Redis } from 'ioredis'
import { createClient } from 'redis'
import { createTable } from '../src/index.js'
import { redisL2, type RedisL2 } from '../src/redis.js'
import { deletePrefix, runPrefix } from './lib/redis.js'
import { median, percentile } from './lib/stats.js'

const URL_ = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
const SCALE = Number(process.env.BENCH_SCALE ?? 1)
const FILLS = Math.round(2_000 * SCALE)
const REPETITIONS = 5
const VALUE = Object.freeze({ id: 'sku-000000', name: 'Product 000000', tags: ['kitchen', 'steel', 'sale'], price: { amount: 1999, currency: 'EUR' }, updatedAt: 1_700_000_000_000 })

interface Client {
  name: string
  l2(prefix: string): RedisL2
  close(): Promise<void>
}

async function ioredisClient(): Promise<Client> {
  const client = new Redis(URL_, { maxRetriesPerRequest: 1, connectTimeout: 1_000 })
  client.on('error', () => {})
  await client.ping()
  return { name: 'ioredis 5', l2: (prefix) => redisL2({ client, prefix }), close: async () => void (await client.quit()) }
}

async function nodeRedisClient(resp: 2 | 3): Promise<Client> {
  const client = createClient({ url: URL_, RESP: resp })
  client.on('error', () => {})
  await client.connect()
  return { name: `node-redis 6, RESP${resp}`, l2: (prefix) => redisL2({ client, prefix }), close: () => client.close() }
}

/**
 * The script calls the server has run so far (`EVALSHA` and `EVAL`, from INFO commandstats): a miss
 * without tags or leases sends nothing else, so these are its round trips (the commands a script
 * runs inside are counted apart, under their own names).
 */
async function scriptCalls(admin: Redis): Promise<number> {
  const stats = await admin.info('commandstats')
  let calls = 0
  for (const match of stats.matchAll(/cmdstat_(evalsha|eval):calls=(\d+)/g)) calls += Number(match[2])
  return calls
}

/** One repetition of the L2-hit case: table A fills `FILLS` ids, a cold table B reads them one at a time; B's fetch latencies in µs. */
async function l2Hits(client: Client, prefix: string, repetition: number): Promise<number[]> {
  const l2 = client.l2(prefix)
  const a = createTable<typeof VALUE>({ name: `hits-${repetition}`, ttl: 600_000, l2 })
  const b = createTable<typeof VALUE>({ name: `hits-${repetition}`, ttl: 600_000, l2 })
  const ids = Array.from({ length: FILLS }, (_, i) => `id-${i}`)
  for (const id of ids) await a.fetch(id, () => VALUE)
  const latencies: number[] = []
  for (const id of ids) {
    const started = performance.now()
    await b.fetch(id, () => VALUE)
    latencies.push((performance.now() - started) * 1_000)
  }
  if (b.stats().l2_hits !== FILLS) throw new Error(`${client.name}: ${b.stats().l2_hits} L2 hits of ${FILLS}`)
  await Promise.all([a.close(), b.close()])
  await l2.close()
  return latencies
}

/** Round trips per cold miss (warm scripts): the table's read, the loader, the write-back. */
async function roundTripsPerMiss(client: Client, prefix: string, admin: Redis): Promise<number> {
  const l2 = client.l2(prefix)
  const table = createTable<typeof VALUE>({ name: 'misses', ttl: 600_000, l2 })
  await table.fetch('warm', () => VALUE) // scripts loaded on the server
  const misses = 200
  const before = await scriptCalls(admin)
  for (let i = 0; i < misses; i++) await table.fetch(`miss-${i}`, () => VALUE)
  const after = await scriptCalls(admin)
  await table.close()
  await l2.close()
  return (after - before) / misses
}

const admin = new Redis(URL_)
const clients = [await ioredisClient(), await nodeRedisClient(2), await nodeRedisClient(3)]
const prefix = runPrefix('clients')
const latencies = new Map<string, number[]>(clients.map((c) => [c.name, []]))
const medians = new Map<string, number[]>(clients.map((c) => [c.name, []]))
for (let repetition = 0; repetition < REPETITIONS; repetition++) {
  for (const client of repetition % 2 === 0 ? clients : [...clients].reverse()) {
    const run = await l2Hits(client, `${prefix}${client.name.replace(/\W+/g, '-')}:`, repetition)
    latencies.get(client.name)!.push(...run)
    medians.get(client.name)!.push(median(run))
  }
}
console.log(`Redis at ${URL_}; ${FILLS} L2-hit fills per client per repetition, ${REPETITIONS} repetitions, interleaved.\n`)
console.log("| client | L2-hit fill, median µs (spread of the repetitions' medians) | p99 µs | round trips per cold miss (read + write-back) |")
console.log('|---|---|---|---|')
for (const client of clients) {
  const all = latencies.get(client.name)!
  const reps = medians.get(client.name)!
  const perMiss = await roundTripsPerMiss(client, `${prefix}misses-${client.name.replace(/\W+/g, '-')}:`, admin)
  console.log(`| ${client.name} | ${median(all).toFixed(0)} (${Math.min(...reps).toFixed(0)}–${Math.max(...reps).toFixed(0)}) | ${percentile(all, 99).toFixed(0)} | ${perMiss.toFixed(2)} |`)
}
for (const client of clients) await client.close()
await deletePrefix(admin, prefix)
await admin.quit()
