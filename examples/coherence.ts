/**
 * Coherence across three processes on one Redis: one updates an id, the other two serve the new
 * value at once; an older message that arrives late is dropped as stale.
 *
 *  1. This script (process A) spawns itself twice (processes B and C, argument `child`). Each of
 *     the three has its own table (`emoji_sets`) with its own L1 rows, an L2 on Redis and a Redis
 *     pub/sub bus, all under this run's random key prefix and channel. The "database" is a Redis
 *     hash per id (`<prefix>db:<id>`: value and version), which each process's loader reads.
 *  2. All three read `party` (A loads it from the database, B and C get it from L2): each now holds
 *     version 1 in its L1.
 *  3. A updates the database to version 2 and calls `table.put('party', value, { version: 2 })`:
 *     L2 is written (version-checked), then the change is broadcast (the put resolves with
 *     `applied: true, broadcast: true` once Redis has accepted the message). B and C each receive the
 *     message, find it newer than the row they hold (`coh_applied`), drop the row, and their very
 *     next read, made as soon as the message arrives, serves version 2 from L2 (no loader call).
 *  4. An out-of-order message is injected on the channel: a `put` of version 1 arriving after
 *     version 2 (a slow replica, a delayed retry). Every table drops it as not newer than what it
 *     holds (`coh_stale`), and B and C keep serving version 2 from their rows.
 *  5. Each process prints its counters; B and C close everything and exit by themselves; A deletes
 *     the run's keys and prints a machine-readable last line
 *     `RESULT {"prefix":..,"id":..,"served":{"B":..,"C":..},"stats":{"A":{..},"B":{..},"C":{..}}}`
 *     (spec/examples-coherence.spec.ts checks it).
 *
 * Run: `npx tsx examples/coherence.ts` (Redis at `REDIS_URL`, default redis://127.0.0.1:6379).
 * Without a reachable Redis it prints how to start one and exits with status 1.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { Redis } from 'ioredis'
import { type ChangeResult, type Id, type LoaderContext, type Stats, type Table, createTable } from 'echostore'
import { redisBus, redisL2 } from 'echostore/redis'
import { REDIS_URL, deletePrefix, requireRedis } from './support/redis.js'

const TABLE = 'emoji_sets'
const ID = 'party'
const PREFIX_ENV = 'ECHOSTORE_EXAMPLE_PREFIX'
/** Bound on the whole run: a hung step ends the example with status 1 instead of hanging. */
const WATCHDOG_MS = 30_000

/** Parent → child. */
type Command = { op: 'fetch' } | { op: 'stats' } | { op: 'exit' }
/** Child → parent. */
type Report =
  | { type: 'ready' }
  | { type: 'value'; value: string | null; loads: number }
  | { type: 'stats'; stats: Stats }
  | { type: 'coherence'; version: number; kind: string; applied: boolean }
  | { type: 'served'; value: string | null; afterMs: number; loads: number }
  | { type: 'closed' }

/** One process's table, L2 and bus, on this run's prefix and channel; the loader reads the database hash. */
function openTable(prefix: string) {
  const db = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 })
  db.on('error', () => {})
  const l2 = redisL2({ url: REDIS_URL, prefix, timeout: 1_000 })
  const bus = redisBus({ url: REDIS_URL, channel: `${prefix}bus` })
  const table: Table<string | undefined> = createTable<string | undefined>({ name: TABLE, ttl: 60_000, l2, bus })
  const loader = async (id: Id, context: LoaderContext) => {
    const [value, version] = await db.hmget(`${prefix}db:${String(id)}`, 'value', 'version')
    if (value === null) return undefined
    context.setVersion(Number(version)) // the row and the L2 entry carry the database's version
    return value
  }
  return {
    table,
    db,
    bus,
    read: () => table.fetch(ID, loader),
    async close() {
      await table.close()
      await bus.close()
      await l2.close()
      await db.quit()
    },
  }
}

function counters(stats: Stats): string {
  return `coh_applied ${stats.coh_applied}  coh_stale ${stats.coh_stale}  hits ${stats.hits}  misses ${stats.misses}  ` + `l2_hits ${stats.l2_hits}  loads ${stats.loads}  size ${stats.size}`
}

/** A child process (B or C): serves reads, and re-reads the id the moment a newer message drops its row. */
async function child(label: string): Promise<void> {
  const prefix = process.env[PREFIX_ENV]
  if (!prefix) throw new Error(`the child needs ${PREFIX_ENV} (run the script without arguments)`)
  const send = (report: Report) => process.send!(report)
  const node = openTable(prefix)
  const say = (line: string) => console.log(`  [${label} pid ${process.pid}] ${line}`)
  const fail = (error: unknown) => {
    console.error(`[${label}]`, error)
    process.exit(1) // the parent sees the exit code and stops
  }

  node.table.events.on('coherence', (event) => {
    const at = performance.now()
    send({ type: 'coherence', version: event.version, kind: event.kind, applied: event.applied })
    if (!event.applied) {
      say(`message ${event.kind} v${event.version}: not newer than what I hold → dropped (coh_stale)`)
      return
    }
    void node.read().then((value) => {
      const afterMs = performance.now() - at
      say(`message ${event.kind} v${event.version}: newer → row dropped; next read serves ${JSON.stringify(value)} (${afterMs.toFixed(2)} ms later)`)
      send({ type: 'served', value: value ?? null, afterMs, loads: node.table.stats().loads })
    }, fail)
  })

  let closing = false
  process.on('message', (command: Command) => {
    if (command.op === 'fetch') {
      void node.read().then((value) => send({ type: 'value', value: value ?? null, loads: node.table.stats().loads }), fail)
    } else if (command.op === 'stats') {
      const stats = node.table.stats()
      say(counters(stats))
      send({ type: 'stats', stats })
    } else {
      closing = true
      void node.close().then(() => {
        send({ type: 'closed' })
        process.disconnect() // nothing else holds the process: it ends by itself
      }, fail)
    }
  })
  // The parent went away without asking: close and leave, rather than linger.
  process.on('disconnect', () => {
    if (!closing) void node.close().finally(() => process.exit(1))
  })
  await node.bus.subscribed()
  send({ type: 'ready' })
}

/** The parent's handle on a child: send a command, await a report of some type. */
class Child {
  private readonly reports: Report[] = []
  private waiting: { match(report: Report): boolean; resolve(report: Report): void; reject(error: Error): void }[] = []
  private gone: Error | undefined
  readonly exited: Promise<number | null>

  constructor(
    readonly label: string,
    readonly process: ChildProcess,
  ) {
    this.exited = new Promise((resolve) =>
      process.once('exit', (code) => {
        // A child that ends fails whatever the parent still waits for from it, at once.
        this.gone = new Error(`process ${label} exited (code ${code}) before reporting`)
        for (const w of this.waiting.splice(0)) w.reject(this.gone)
        resolve(code)
      }),
    )
    process.on('message', (report: Report) => {
      const i = this.waiting.findIndex((w) => w.match(report))
      if (i === -1) this.reports.push(report)
      else this.waiting.splice(i, 1)[0]!.resolve(report)
    })
  }

  /** The first report of `type` (and matching `where`) not taken yet, already received or still to come. */
  next<T extends Report['type']>(type: T, where: (report: Extract<Report, { type: T }>) => boolean = () => true): Promise<Extract<Report, { type: T }>> {
    const match = (report: Report) => report.type === type && where(report as Extract<Report, { type: T }>)
    const i = this.reports.findIndex(match)
    if (i !== -1) return Promise.resolve(this.reports.splice(i, 1)[0] as Extract<Report, { type: T }>)
    if (this.gone !== undefined) return Promise.reject(this.gone)
    return new Promise((resolve, reject) => this.waiting.push({ match, resolve: resolve as (report: Report) => void, reject }))
  }

  send(command: Command): void {
    this.process.send(command)
  }
}

function spawnChild(label: string, prefix: string): Child {
  let tsx = 'tsx'
  try {
    tsx = import.meta.resolve('tsx') // works from any working directory
  } catch {
    // leave it to Node's resolution from the working directory
  }
  const child = spawn(process.execPath, ['--import', tsx, fileURLToPath(import.meta.url), 'child', label], {
    env: { ...process.env, REDIS_URL, [PREFIX_ENV]: prefix },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  return new Child(label, child)
}

/** Process A: the writer, the injector, the summary and the clean-up. */
async function parent(): Promise<void> {
  await requireRedis('examples/coherence.ts')
  const prefix = `echostore-example:coherence:${randomBytes(6).toString('hex')}:`
  console.log(`Redis ${REDIS_URL}, key prefix ${prefix}, channel ${prefix}bus, table "${TABLE}", id "${ID}"`)
  const children = [spawnChild('B', prefix), spawnChild('C', prefix)]
  const watchdog = setTimeout(() => {
    console.error(`examples/coherence.ts: no result within ${WATCHDOG_MS} ms; stopping`)
    for (const c of children) c.process.kill('SIGKILL')
    process.exit(1)
  }, WATCHDOG_MS)
  watchdog.unref()

  let deleted = 0
  let result: { served: Record<string, string | null>; stats: Record<string, Stats> } | undefined
  let putResult: ChangeResult | undefined
  const node = openTable(prefix)
  try {
    await Promise.all([node.bus.subscribed(), ...children.map((c) => c.next('ready'))])

    console.log('\n1. the database holds version 1; all three processes read it')
    await node.db.hset(`${prefix}db:${ID}`, { value: '🎉 v1', version: 1 })
    console.log(`  [A pid ${process.pid}] read → ${JSON.stringify(await node.read())} (loaded from the database)`)
    for (const c of children) {
      c.send({ op: 'fetch' })
      const { value, loads } = await c.next('value')
      console.log(`  [${c.label} pid ${c.process.pid}] read → ${JSON.stringify(value)} (${loads === 0 ? 'from L2, no load' : `${loads} load(s)`})`)
    }

    console.log('\n2. A updates the database to version 2 and puts it through its table')
    await node.db.hset(`${prefix}db:${ID}`, { value: '🥳 v2', version: 2 })
    const put = await node.table.put(ID, '🥳 v2', { version: 2 })
    console.log(`  [A pid ${process.pid}] put v${put.version} (applied: ${put.applied}, broadcast: ${put.broadcast}): L2 written, ${put.broadcast ? 'change broadcast' : 'broadcast failed'}`)
    putResult = put
    const served = await Promise.all(children.map((c) => c.next('served')))

    console.log('\n3. an older message arrives late: a put of version 1, injected on the channel')
    const injector = redisBus({ url: REDIS_URL, channel: `${prefix}bus` })
    await injector.publish({ table: TABLE, id: ID, version: 1, kind: 'put', origin: 'late-replica' })
    await injector.close()
    await Promise.all(children.map((c) => c.next('coherence', (r) => r.version === 1 && !r.applied)))
    for (const c of children) {
      c.send({ op: 'fetch' })
      const { value } = await c.next('value')
      console.log(`  [${c.label} pid ${c.process.pid}] read after the late message → ${JSON.stringify(value)}`)
    }

    console.log('\n4. counters')
    console.log(`  [A pid ${process.pid}] ${counters(node.table.stats())}`)
    const stats: Record<string, Stats> = { A: node.table.stats() }
    for (const c of children) {
      c.send({ op: 'stats' })
      stats[c.label] = (await c.next('stats')).stats
    }
    result = { served: { B: served[0]!.value, C: served[1]!.value }, stats }

    for (const c of children) c.send({ op: 'exit' })
    const codes = await Promise.all(children.map((c) => c.exited))
    console.log(`\nB and C closed their table, bus and L2 and exited with codes ${codes.join(', ')}`)
    if (codes.some((code) => code !== 0)) process.exitCode = 1
  } finally {
    await node.close()
    deleted = await deletePrefix(prefix)
    clearTimeout(watchdog)
    for (const c of children) if (c.process.exitCode === null) c.process.kill('SIGKILL')
  }

  if (result === undefined) throw new Error('unreachable: the run ended without a result')
  const { stats, served } = result
  const shown =
    putResult?.applied === true &&
    putResult.broadcast &&
    served.B === '🥳 v2' &&
    served.C === '🥳 v2' &&
    stats.B!.coh_applied === 1 &&
    stats.C!.coh_applied === 1 &&
    stats.B!.coh_stale === 1 &&
    stats.C!.coh_stale === 1 &&
    stats.B!.loads === 0 &&
    stats.C!.loads === 0
  console.log(
    `\n${shown ? 'Shown' : 'NOT shown'}: after A's put, B and C each applied the change (coh_applied 1) and served version 2 ` +
      `at once from L2 without a load; the late version-1 message was dropped everywhere (coh_stale ${stats.A!.coh_stale}/${stats.B!.coh_stale}/${stats.C!.coh_stale}).`,
  )
  console.log(`Cleaned up ${deleted} key(s) under ${prefix}`)
  console.log(`RESULT ${JSON.stringify({ prefix, id: ID, served, stats })}`)
  if (!shown) process.exitCode = 1
}

const [role, label] = process.argv.slice(2)
if (role !== undefined && !(role === 'child' && (label === 'B' || label === 'C'))) {
  console.error(`usage: npx tsx examples/coherence.ts   (the arguments "child B|C" are for the script's own child processes)`)
  process.exit(2)
}
await (role === 'child' ? child(label!) : parent()).catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error)
  process.exit(1)
})
