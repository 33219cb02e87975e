/**
 * Two tables in two processes sharing one Redis: the second process's cold read is an L2 hit.
 *
 *  1. This process (table A) reads a cold id with a herd of 200 concurrent callers: one loader call
 *     (a simulated 20 ms origin), 199 coalesced joins, and the answer written to Redis.
 *  2. It then spawns itself as a child process (argument `child`), whose table B (same name, its own
 *     connection) reads the same id with a herd of 200 of its own: no loader call, one `l2_hit`.
 *  3. Both sets of counters are printed, the keys written under this run's own random prefix are
 *     deleted, and a last machine-readable line `RESULT {"prefix":..,"id":..,"a":{stats},"b":{stats}}`
 *     is printed (spec/examples-redis-l2.spec.ts checks it).
 *
 * Run: `npx tsx examples/redis-l2.ts` (Redis at `REDIS_URL`, default redis://127.0.0.1:6379).
 * Without a reachable Redis it prints how to start one and exits with status 1.
 */
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { Redis } from 'ioredis'
import type { L2Store } from 'echostore/store'
import { type Stats, createTable } from 'echostore'
import { redisL2 } from 'echostore/redis'
import { counterLine } from './support/readout.js'
import { REDIS_URL, deletePrefix, requireRedis } from './support/redis.js'

const TABLE = 'emoji_sets'
const HERD = 200
const ORIGIN_MS = 20
/** The parent hands the child its prefix and id through these. */
const PREFIX_ENV = 'ECHOSTORE_EXAMPLE_PREFIX'
const ID_ENV = 'ECHOSTORE_EXAMPLE_ID'
/** The child's machine-readable line, read by the parent. */
const CHILD_MARK = 'CHILD_STATS '

type EmojiSet = { id: string; emoji: string[]; loadedBy: number }

/** A simulated origin (a database): answers after `ORIGIN_MS`, counts its calls. */
function origin() {
  let calls = 0
  const loader = (id: string | number) =>
    new Promise<EmojiSet>((resolve) => {
      calls++
      setTimeout(() => resolve({ id: String(id), emoji: ['🎉', '🥳', '🎊'], loadedBy: process.pid }), ORIGIN_MS)
    })
  return { loader, calls: () => calls }
}

/**
 * An L2 on its own, already connected, Redis connection. Every L2 call is bounded (50 ms by default)
 * from the moment it is made, connecting included: a process that reads before its connection is up
 * can see its first reads time out and fall through to the origin. So connect first (as a server
 * does at startup), then serve.
 */
async function connectedL2(prefix: string): Promise<{ l2: L2Store; close(): Promise<void> }> {
  const client = new Redis(REDIS_URL, { maxRetriesPerRequest: 1, connectTimeout: 1_000 })
  client.on('error', () => {}) // an outage reaches the table as failed calls, which it counts
  await client.ping() // resolves once the connection is ready
  const l2 = redisL2({ client, prefix })
  return {
    l2,
    async close() {
      await l2.close() // a store never closes a client it was given
      await client.quit()
    },
  }
}

/** Reads `id` through `table` with `HERD` concurrent callers; returns what they got. */
async function herd(read: () => Promise<EmojiSet | undefined>): Promise<(EmojiSet | undefined)[]> {
  return Promise.all(Array.from({ length: HERD }, read))
}

/** Runs this script again as a child process (`child` argument); resolves with its stats, echoing its output. */
function runChild(prefix: string, id: string): Promise<Stats> {
  const script = fileURLToPath(import.meta.url)
  let tsx = 'tsx'
  try {
    tsx = import.meta.resolve('tsx') // works from any working directory
  } catch {
    // leave it to Node's resolution from the working directory
  }
  const child = spawn(process.execPath, ['--import', tsx, script, 'child'], {
    env: { ...process.env, REDIS_URL, [PREFIX_ENV]: prefix, [ID_ENV]: id },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  let out = ''
  child.stdout.setEncoding('utf8')
  child.stdout.on('data', (chunk: string) => (out += chunk))
  return new Promise((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (code) => {
      const lines = out.split('\n')
      for (const line of lines) if (line !== '' && !line.startsWith(CHILD_MARK)) console.log(`  [child ${child.pid}] ${line}`)
      const mark = lines.find((line) => line.startsWith(CHILD_MARK))
      if (code !== 0 || mark === undefined) reject(new Error(`the child process exited with ${code}${mark === undefined ? ' and printed no stats' : ''}`))
      else resolve(JSON.parse(mark.slice(CHILD_MARK.length)) as Stats)
    })
  })
}

function show(label: string, stats: Stats): void {
  console.log(`${label}  ${counterLine(stats)}`)
  console.log(`${' '.repeat(label.length)}  l2_hits: ${stats.l2_hits}, loads: ${stats.loads}, coalesced: ${stats.coalesced}, l2_errors: ${stats.l2_errors}, l2_timeouts: ${stats.l2_timeouts}`)
}

/** Process A: the herd that pays the one load, then the child, then the summary and the clean-up. */
async function parent(): Promise<void> {
  await requireRedis('examples/redis-l2.ts')
  const prefix = `echostore-example:redis-l2:${randomBytes(6).toString('hex')}:`
  const id = 'party'
  console.log(`Redis ${REDIS_URL}, key prefix ${prefix}, table "${TABLE}", id "${id}" (cold)`)
  let a: Stats | undefined
  let b: Stats | undefined
  let deleted = 0
  try {
    const { l2, close } = await connectedL2(prefix)
    const table = createTable<EmojiSet>({ name: TABLE, ttl: 60_000, l2 })
    const db = origin()
    const answers = await herd(() => table.fetch(id, db.loader))
    a = table.stats()
    await table.close()
    await close()
    console.log(`\nprocess A (pid ${process.pid}): a herd of ${HERD} on a cold id, origin ${ORIGIN_MS} ms`)
    show('  table A', a)
    console.log(`  origin calls: ${db.calls()}; every reader got the same object: ${answers.every((x) => x === answers[0])}`)

    console.log(`\nprocess B: a second process, its own table and connection, a herd of ${HERD} on the same id`)
    b = await runChild(prefix, id)
  } finally {
    deleted = await deletePrefix(prefix)
  }
  const cross = b.l2_hits === 1 && b.loads === 0
  console.log(
    `\n${cross ? 'Shown' : 'NOT shown'}: process B's cold read was answered by Redis (l2_hits ${b.l2_hits}, loads ${b.loads}); ` +
      `${HERD * 2} reads across two processes cost ${a.loads + b.loads} origin call(s).`,
  )
  console.log(`Cleaned up ${deleted} key(s) under ${prefix}`)
  console.log(`RESULT ${JSON.stringify({ prefix, id, a, b })}`)
  if (!cross) process.exitCode = 1
}

/** Process B: same table name and prefix, a new connection, a cold L1. */
async function child(): Promise<void> {
  const prefix = process.env[PREFIX_ENV]
  const id = process.env[ID_ENV]
  if (!prefix || !id) throw new Error(`the child needs ${PREFIX_ENV} and ${ID_ENV} (run the script without arguments)`)
  const { l2, close } = await connectedL2(prefix)
  const table = createTable<EmojiSet>({ name: TABLE, ttl: 60_000, l2 })
  const db = origin()
  const answers = await herd(() => table.fetch(id, db.loader))
  const stats = table.stats()
  await table.close()
  await close()
  show('table B', stats)
  console.log(`origin calls: ${db.calls()}; value loaded by pid ${answers[0]?.loadedBy} (this is pid ${process.pid})`)
  console.log(`${CHILD_MARK}${JSON.stringify(stats)}`)
}

const role = process.argv[2]
if (role !== undefined && role !== 'child') {
  console.error(`usage: npx tsx examples/redis-l2.ts   (the argument "child" is for the script's own child process, got "${role}")`)
  process.exit(2)
}
await (role === 'child' ? child() : parent()).catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error)
  process.exit(1)
})
