import { randomBytes } from 'node:crypto'
import type { Redis } from 'ioredis'
import { type Id, type Table, type TableOptions, createTable, localBus, memoryL2 } from '../src/index.js'
import { redisL2 } from '../src/redis.js'
import { type ChaosL2, chaosL2 } from '../src/testing.js'
import { connectRedis, deletePrefix, quitRedis, redisUnreachable } from '../bench/lib/redis.js'
import type { Row } from './origin.js'
import { type Problems, show } from './problems.js'
import { Tally } from './tally.js'
import { ledgerClock } from './timer-ledger.js'

/**
 * The shape every soak table shares: few rows and short lives, so the table is often full
 * (`full_skips`), rows and negative rows expire all the time, the sweeper runs every few ms, and a
 * hanging loader is cut off within a tenth of a second. One name, so their coherence messages
 * reach each other over the shared bus.
 */
export const SHAPE = { name: 'soak', capacity: 256, ttl: 200, jitter: 0.2, negativeTtl: 50, sweepInterval: 10, loadTimeout: 100 } as const satisfies TableOptions

/** The plain table keeps values past their expiry, so the fail-safe and its back-off run under the faults of its loaders. */
export const GRACE = 300
/** The tables with an L2 take per-id leases: short, so a stalled store makes flights wait, give up and take over. */
export const LEASE = { ttl: 100, wait: 50 } as const

/** Which second layer a table has: none, `chaosL2(memoryL2())`, or `chaosL2(redisL2(...))`. */
export type TableLabel = 'plain' | 'memory' | 'redis'

/** One table of the run, its fault injector (when it has an L2), and what the soak saw of it. */
export interface SoakTable {
  label: TableLabel
  table: Table<Row | undefined, Id>
  chaos: ChaosL2 | undefined
  tally: Tally
}

/** The run's own corner of Redis: its key prefix, the name of the L2's connection, and a connection of its own. */
export interface RedisSide {
  url: string
  prefix: string
  /** The L2 connection's name in `CLIENT LIST`, so the fault schedule can kill it. */
  connectionName: string
  admin: Redis
}

/** What closing the world left behind. */
export interface Leftovers {
  /** Timers still pending on the tables' clock 2 s after everything closed. */
  timers: number
  /** Keys a second clean-up pass still found under the run's prefix (undefined without Redis). */
  redisKeys: number | undefined
  /** Keys the first pass deleted. */
  redisKeysDeleted: number | undefined
}

/** The tables of a run, on one clock and one bus. */
export interface World {
  tables: SoakTable[]
  redis: RedisSide | undefined
  /** Closes the tables, then the stores and the bus, deletes the run's Redis keys, and says what was left. */
  close(): Promise<Leftovers>
}

/** How long closing may take to let the last timers (an L2 call's bound, a publish's bound) run out. */
const TIMER_GRACE_MS = 2_000

/**
 * Builds the tables: one without L2, one on `chaosL2(memoryL2())`, and, when `redisUrl` is given,
 * one on `chaosL2(redisL2({ url, prefix }))` with a fresh prefix. A Redis that does not answer is
 * an error, never a silent skip. Faults the owner catches and errors a bus handler throws go to
 * `problems`.
 */
export async function buildWorld(redisUrl: string | undefined, problems: Problems): Promise<World> {
  if (redisUrl !== undefined) {
    const why = await redisUnreachable(redisUrl)
    if (why !== undefined) throw new Error(`the redis table needs Redis at ${redisUrl}, which did not answer (${why})`)
  }
  const clock = ledgerClock()
  const bus = localBus({ onHandlerError: (error) => problems.add('no bus handler threw', show(error)) })
  const tables: SoakTable[] = []
  const add = (label: TableLabel, chaos: ChaosL2 | undefined) => {
    const table = createTable<Row | undefined, Id>({ ...SHAPE, clock, bus, ...(chaos === undefined ? { grace: GRACE } : { l2: chaos, lease: LEASE }) })
    const tally = new Tally()
    tally.listen(table, problems)
    tables.push({ label, table, chaos, tally })
  }
  add('plain', undefined)
  add('memory', chaosL2(memoryL2({ clock }), clock))
  let redis: RedisSide | undefined
  if (redisUrl !== undefined) {
    const tag = randomBytes(6).toString('hex')
    redis = { url: redisUrl, prefix: `echostore-soak:${tag}:`, connectionName: `echostore-soak-${tag}`, admin: await connectRedis(redisUrl) }
    const named = new URL(redisUrl)
    named.searchParams.set('connectionName', redis.connectionName)
    // The soak cuts this connection on purpose: its outages are the table's counters, not a process warning.
    add('redis', chaosL2(redisL2({ url: named.toString(), prefix: redis.prefix, onError: () => {} }), clock))
  }

  async function close(): Promise<Leftovers> {
    await Promise.all(tables.map(({ table }) => table.close()))
    for (const { chaos } of tables) chaos?.heal()
    await Promise.all(tables.map(({ chaos }) => chaos?.close()))
    await bus.close()
    const until = performance.now() + TIMER_GRACE_MS
    while (clock.pending > 0 && performance.now() < until) await new Promise((resolve) => setTimeout(resolve, 10))
    if (redis === undefined) return { timers: clock.pending, redisKeys: undefined, redisKeysDeleted: undefined }
    const deleted = await deletePrefix(redis.admin, redis.prefix)
    const left = await deletePrefix(redis.admin, redis.prefix)
    await quitRedis(redis.admin)
    return { timers: clock.pending, redisKeys: left, redisKeysDeleted: deleted }
  }

  return { tables, redis, close }
}
