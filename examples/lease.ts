/**
 * Four processes, one herd, one load: the `lease` option.
 *
 * This script starts four copies of itself (argument `worker`), each with its own table, its own
 * Redis connections, a `redisL2` and a `redisBus` on one key prefix and channel. When all four are
 * ready, it tells them to go at once: each fires a herd of 200 concurrent fetches of one cold id,
 * whose origin takes 50 ms and counts its calls. It does this twice:
 *
 *   without lease   every process misses L2 before any has filled it: 4 origin calls
 *   lease: true     one process takes the id's lease and loads; the other three wait for its
 *                   fill (its bus message wakes them) and answer from Redis: 1 origin call
 *
 * It prints each process's counters, the origin calls per herd, cleans up its keys, and ends with a
 * machine-readable line `RESULT {...}` (spec/examples-lease.spec.ts checks it).
 *
 * Run: `npx tsx examples/lease.ts` (Redis at `REDIS_URL`, default redis://127.0.0.1:6379).
 * Without a reachable Redis it prints how to start one and exits with status 1.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { Redis } from 'ioredis'
import { type Stats, createTable } from 'echostore'
import { redisBus, redisL2 } from 'echostore/redis'
import { REDIS_URL, deletePrefix, requireRedis } from './support/redis.js'

const TABLE = 'availability'
const PROCESSES = 4
const HERD = 200
const ORIGIN_MS = 50

/** What the parent tells a worker, and what a worker answers. */
type ToWorker = { go: string; lease: boolean } | { exit: true }
type FromWorker = { ready: true } | { done: { stats: Stats; originCalls: number; answers: string[] } }

/** One herd in a worker: a fresh table (cold L1), `HERD` fetches of `id` at once. */
async function herd(id: string, lease: boolean, prefix: string, client: Redis, bus: ReturnType<typeof redisBus>) {
  const table = createTable<string, string>({ name: TABLE, ttl: 60_000, l2: redisL2({ client, prefix }), bus, lease })
  let originCalls = 0
  const origin = (key: string) =>
    new Promise<string>((resolve) => {
      originCalls++
      setTimeout(() => resolve(`${key} loaded by pid ${process.pid}`), ORIGIN_MS)
    })
  const answers = await Promise.all(Array.from({ length: HERD }, () => table.fetch(id, origin)))
  const stats = table.stats()
  await table.close()
  return { stats, originCalls, answers: [...new Set(answers.map(String))] }
}

async function worker(prefix: string): Promise<void> {
  const client = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 })
  client.on('error', () => {})
  await client.ping() // connected before serving: a first read that times out would load instead
  const bus = redisBus({ client, channel: `${prefix}bus` })
  await bus.subscribed()
  process.send!({ ready: true } satisfies FromWorker)
  process.on('message', (message: ToWorker) => {
    if ('exit' in message) {
      void bus
        .close()
        .then(() => client.quit())
        .then(() => process.disconnect())
      return
    }
    void herd(message.go, message.lease, prefix, client, bus).then((done) => process.send!({ done } satisfies FromWorker))
  })
}

/** The next message from `child` that has `key`. */
function next<K extends 'ready' | 'done'>(child: ChildProcess, key: K): Promise<Extract<FromWorker, Record<K, unknown>>> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: FromWorker) => {
      if (!(key in message)) return
      child.off('message', onMessage)
      resolve(message as Extract<FromWorker, Record<K, unknown>>)
    }
    child.on('message', onMessage)
    child.once('exit', (code) => reject(new Error(`a worker exited (${code}) before "${key}"`)))
  })
}

async function parent(): Promise<void> {
  await requireRedis('examples/lease.ts')
  const prefix = `echostore-example:lease:${randomBytes(6).toString('hex')}:`
  const script = fileURLToPath(import.meta.url)
  let tsx = 'tsx'
  try {
    tsx = import.meta.resolve('tsx')
  } catch {
    // leave it to Node's resolution from the working directory
  }
  console.log(`Redis ${REDIS_URL}, key prefix ${prefix} · ${PROCESSES} processes, a herd of ${HERD} each on one cold id, origin ${ORIGIN_MS} ms`)
  const workers = Array.from({ length: PROCESSES }, () => spawn(process.execPath, ['--import', tsx, script, 'worker', prefix], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }))
  const rounds: Record<'withoutLease' | 'withLease', { originCalls: number; perProcess: Stats[]; answers: string[] }> = {} as never
  let deleted = 0
  try {
    await Promise.all(workers.map((w) => next(w, 'ready')))
    for (const [key, lease] of [
      ['withoutLease', false],
      ['withLease', true],
    ] as const) {
      const id = `depot-7/sku-${key}`
      const done = workers.map((w) => next(w, 'done'))
      for (const w of workers) w.send({ go: id, lease } satisfies ToWorker) // all four at once
      const results = (await Promise.all(done)).map((m) => m.done)
      const originCalls = results.reduce((n, r) => n + r.originCalls, 0)
      const answers = [...new Set(results.flatMap((r) => r.answers))]
      rounds[key] = { originCalls, perProcess: results.map((r) => r.stats), answers }
      console.log(`\n${lease ? 'lease: true' : 'without lease'}: ${originCalls} origin call(s) for ${PROCESSES * HERD} reads; ${answers.length} distinct answer(s)`)
      for (const [i, r] of results.entries()) {
        const s = r.stats
        console.log(
          `  process ${i + 1}: origin calls ${r.originCalls}, l2_hits ${s.l2_hits}, coalesced ${s.coalesced}, lease_acquired ${s.lease_acquired}, lease_waited ${s.lease_waited}, lease_lost ${s.lease_lost}`,
        )
      }
    }
  } finally {
    for (const w of workers) if (w.connected) w.send({ exit: true } satisfies ToWorker)
    await Promise.all(workers.map((w) => new Promise((resolve) => (w.exitCode !== null ? resolve(null) : w.once('exit', resolve)))))
    deleted = await deletePrefix(prefix)
  }
  const shown = rounds.withLease.originCalls === 1 && rounds.withLease.answers.length === 1
  console.log(
    `\n${shown ? 'Shown' : 'NOT shown'}: with lease, ${PROCESSES} processes × ${HERD} readers cost ${rounds.withLease.originCalls} origin call (without: ${rounds.withoutLease.originCalls}).`,
  )
  console.log(`Cleaned up ${deleted} key(s) under ${prefix}`)
  console.log(`RESULT ${JSON.stringify({ prefix, processes: PROCESSES, herd: HERD, ...rounds })}`)
  if (!shown) process.exitCode = 1
}

const [role, prefixArg] = process.argv.slice(2)
if (role !== undefined && role !== 'worker') {
  console.error(`usage: npx tsx examples/lease.ts   (the argument "worker" is for the script's own child processes, got "${role}")`)
  process.exit(2)
}
await (role === 'worker' ? worker(prefixArg!) : parent()).catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error)
  process.exit(1)
})
