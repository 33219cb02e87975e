import { performance } from 'node:perf_hooks'
import { dayContenders } from '../contenders/day/index.js'
import type { DayContender } from '../contenders/day/types.js'
import type { DayPanel } from '../day-svg.js'
import { num, sig, type Table } from '../lib/format.js'
import { progress } from '../lib/progress.js'
import { connectRedis, quitRedis, redisUnreachable, redisVersion, runPrefix } from '../lib/redis.js'
import { startOwnRedis, type OwnRedis } from '../lib/redis-server.js'
import type { BenchContext, Metrics, WorkloadResult } from './context.js'
import { dayFigures, OPENING_MS, type DayFigures } from './w12-figures.js'
import { runDay, type DayRequest } from './w12-instances.js'
import { BIN_MS, LATENCY_MEDIAN_MS, ORIGIN_LIMIT } from './w12-origin.js'
import { buildTrace, CATALOGUE, DEPOTS, POPULARITY, PRODUCTS, READ, TENANTS, UPDATE, dayPlan, type DayPlan } from './w12-trace.js'

/** Instances of the shared shape. */
export const INSTANCES = 4
/** Rows each instance holds at most: more than the day's keys, so no contender evicts. */
const CAPACITY = 100_000
/** Grace (or stale window) as a multiple of the ttl, for every contender that has one. */
const GRACE_TTLS = 10
/** The one load deadline every contender with a timeout gets, ms. */
const LOAD_DEADLINE_MS = 2_000

/** One row of a W12 table: a contender in a shape and its figures. */
export interface DayRow {
  name: string
  contender: DayContender
  figures: DayFigures
}

/** What W12 hands the picture writer besides its section. */
export interface W12Result extends WorkloadResult {
  plan: DayPlan
  panels: DayPanel[]
}

/** The keys of W12's metrics per contender: `<figure>1` for one instance, `<figure>4` for four. */
export function dayMetric(figure: 'calls' | 'failed' | 'p99' | 'stale' | 'wrong' | 'redis', instances: number): string {
  return `${figure}${instances}`
}

function resultTable(caption: string, rows: DayRow[], shared: boolean): Table {
  return {
    caption,
    headers: [
      'contender',
      'origin calls',
      'peak concurrent',
      'during outage',
      'failed reads (in outage)',
      'of them answerable',
      'p50 ms',
      'p99 ms',
      `p99 after ${OPENING_MS / 1000} s`,
      'max ms',
      'stale after update',
      'stale lag max ms',
      'oldest in outage ms',
      ...(shared ? ['Redis commands', 'per read', 'top commands', 'Redis CPU ms', 'CPU ms / instance (min–max)'] : ['CPU ms']),
      'max lag ms',
      'load avg',
    ],
    rows: rows.map(({ name, figures: f }) => [
      name,
      num(f.originCalls),
      num(f.originPeak),
      num(f.originInOutage),
      `${num(f.failed)} (${num(f.failedInOutage)})`,
      num(f.failedAnswerable),
      sig(f.p50),
      sig(f.p99),
      sig(f.p99AfterOpening),
      sig(f.max),
      num(f.stale),
      f.stale > 0 ? sig(f.staleLagMaxMs) : '—',
      num(f.oldestInOutageMs),
      ...(shared
        ? [
            num(f.redisCommands),
            sig(f.redisCommands / f.reads),
            f.redisTop,
            num(f.redisCpuMs),
            `${num(f.cpuMs.reduce((s, x) => s + x, 0) / f.cpuMs.length)} (${num(Math.min(...f.cpuMs))}–${num(Math.max(...f.cpuMs))})`,
          ]
        : [num(f.cpuMs[0]!)]),
      sig(f.lagMaxMs),
      num(f.loadAverage, 1),
    ]),
  }
}

/** The shared Redis of the four-instance shape: a redis-server of its own when one can be started, else REDIS_URL. */
async function sharedRedis(ctx: BenchContext): Promise<{ url: string; own?: OwnRedis; why?: string }> {
  try {
    const own = await startOwnRedis(ctx.cfg.ownRedisPort)
    if (own !== undefined) return { url: own.url, own }
  } catch (error) {
    progress(`W12: could not start a redis-server of its own (${String(error)}); using ${ctx.cfg.redisUrl}`)
  }
  const why = await redisUnreachable(ctx.cfg.redisUrl)
  return why === undefined ? { url: ctx.cfg.redisUrl } : { url: ctx.cfg.redisUrl, why }
}

/**
 * W12 a service's day: a seeded trace of stock reads over tenants × depots × products, replayed in
 * real time against each contender, first as one instance, then as four instances sharing Redis,
 * each instance a child process, every origin call served by one origin in this process. See the
 * section's method for the day and BENCHMARKS.md for the figures.
 */
export async function runW12(ctx: BenchContext): Promise<W12Result> {
  const started = performance.now()
  const plan = dayPlan(ctx.cfg.scale === 1)
  const trace = buildTrace(plan)
  const selected: { registry: string; variants: DayContender[] }[] = []
  for (const c of ctx.contenders) {
    const variants = await dayContenders(c.name)
    if (variants.length > 0) selected.push({ registry: c.name, variants })
  }
  const without = ctx.contenders.filter((c) => !selected.some((s) => s.registry === c.name)).map((c) => c.name)
  const base = {
    full: ctx.cfg.scale === 1,
    capacity: CAPACITY,
    grace: GRACE_TTLS * plan.ttl,
    loadDeadline: LOAD_DEADLINE_MS,
    root: ctx.cfg.root,
    ...(ctx.cfg.cpuProfDir !== undefined ? { cpuProfDir: ctx.cfg.cpuProfDir } : {}),
  }
  const runs = selected.length * 1 + selected.reduce((s, x) => s + x.variants.length, 0)
  let n = 0

  const one: DayRow[] = []
  for (const { registry, variants } of selected) {
    const contender = variants[0]!
    const label = `W12 one instance [${++n}/${runs}] · ${contender.name}`
    progress(`${label} · starting`)
    const run = await runDay(plan, { ...base, label, contender: registry, variant: 0, instances: 1 })
    one.push({ name: contender.name, contender, figures: dayFigures(plan, run, base.grace) })
  }

  const four: DayRow[] = []
  const redis = selected.length > 0 ? await sharedRedis(ctx) : undefined
  let redisNote = ''
  if (redis !== undefined && redis.why === undefined) {
    const admin = await connectRedis(redis.url)
    redisNote = `Redis ${await redisVersion(admin)} at ${redis.url}${redis.own !== undefined ? ' (a redis-server the bench started for W12 alone, no persistence, so INFO commandstats counts nothing else)' : ' (REDIS_URL: its INFO commandstats may count other clients too)'}`
    try {
      for (const { registry, variants } of selected) {
        for (let variant = 0; variant < variants.length; variant++) {
          const contender = variants[variant]!
          const label = `W12 ${INSTANCES} instances [${++n}/${runs}] · ${contender.name}`
          progress(`${label} · starting`)
          if (redis.own !== undefined) await admin.flushall()
          const request: DayRequest = { ...base, label, contender: registry, variant, instances: INSTANCES, redis: { shared: { url: redis.url, prefix: runPrefix('w12') }, admin } }
          const run = await runDay(plan, request)
          four.push({ name: contender.name, contender, figures: dayFigures(plan, run, base.grace) })
        }
      }
    } finally {
      await quitRedis(admin)
      await redis.own?.stop()
    }
  } else if (redis?.why !== undefined) progress(`W12 ${INSTANCES} instances skipped: Redis at ${redis.url} is not reachable (${redis.why})`)

  const metrics: Metrics = new Map()
  const put = (name: string, instances: number, f: DayFigures) => {
    const m = metrics.get(name) ?? {}
    m[dayMetric('calls', instances)] = f.originCalls
    m[dayMetric('failed', instances)] = f.failed
    m[dayMetric('p99', instances)] = f.p99
    m[dayMetric('stale', instances)] = f.stale
    m[dayMetric('wrong', instances)] = f.failed + f.stale
    if (Number.isFinite(f.redisCommands)) m[dayMetric('redis', instances)] = f.redisCommands
    metrics.set(name, m)
  }
  for (const r of one) put(r.name, 1, r.figures)
  for (const r of four) put(r.name, INSTANCES, r.figures)

  let reads = 0
  let updates = 0
  let pairs = 0
  for (let i = 0; i < trace.length; i++) {
    if (trace.kind[i] === READ) reads++
    else if (trace.kind[i] === UPDATE) updates++
    else pairs++
  }
  const setupRows = selected.flatMap(({ variants }) => variants.map((c, v) => [c.name, v === 0 ? c.setup(false) : '(four-instance shape only)', c.setup(true)]))
  const tables: Table[] = [resultTable(`**W12 one instance** (one child process per contender; no Redis)`, one, false)]
  if (four.length > 0) tables.push(resultTable(`**W12 ${INSTANCES} instances sharing Redis** (${INSTANCES} child processes per contender; the trace spread over them)`, four, true))
  const COUNTERS = [
    'loads',
    'coalesced',
    'l2_hits',
    'stale_hits',
    'failsafe',
    'load_errors',
    'fenced',
    'l2_timeouts',
    'l2_errors',
    'l2_skipped',
    'lease_acquired',
    'lease_waited',
    'lease_lost',
    'coh_applied',
  ]
  const counted = [...one.map((r) => ['one', r] as const), ...four.map((r) => [`${INSTANCES}`, r] as const)].filter(([, r]) => Object.keys(r.figures.counters).length > 0)
  if (counted.length > 0)
    tables.push({
      caption: "**W12 EchoStore's counters** (`stats()` at the end of the day, summed over instances)",
      headers: ['row', 'instances', ...COUNTERS],
      rows: counted.map(([shape, r]) => [r.name, shape, ...COUNTERS.map((c) => num(r.figures.counters[c] ?? Number.NaN))]),
    })
  const scripted = four.filter((r) => r.name.startsWith('echostore') && r.figures.redisByCommand.length > 0)
  if (scripted.length > 0) {
    const names = [...new Set(scripted.flatMap((r) => r.figures.redisByCommand.map(([c]) => c)))]
    tables.push({
      caption: "**W12 EchoStore's Redis commands by name** (the four-instance shape; INFO commandstats, the commands inside each script counted too)",
      headers: ['row', ...names],
      rows: scripted.map((r) => [r.name, ...names.map((c) => num(r.figures.redisByCommand.find(([n]) => n === c)?.[1] ?? 0))]),
    })
  }
  tables.push({
    caption: '**W12 set-up** (ttl, grace and deadline as in the method; capacity 100,000 rows per instance: none evicts)',
    headers: ['contender', 'notes: one instance', 'notes: four instances'],
    rows: setupRows,
  })
  const o = plan.outage
  const method =
    `A seeded day of ${num(plan.dayMs / 1000)} s in real time, compressed (ttl ${num(plan.ttl)} ms), over ${TENANTS} tenants × ${DEPOTS} depots × ${PRODUCTS} products (${num(CATALOGUE)} stock rows; popularity Zipf ${POPULARITY} over the rows, ranks dealt by a seeded shuffle), the same trace for every contender and both shapes: ` +
    `${num(reads)} reads in all (Poisson, ${num(plan.readsPerSec)}/s, ${num(plan.missingShare * 100)} % of them of ids the origin does not have); the hottest ${plan.hotRows} rows read together at t = 0 (one shared expiry); ` +
    `${plan.bursts.length} campaign bursts of ${plan.readersPerBurstKey} concurrent readers on each of 3 cold campaign keys at one instant (at ${plan.bursts.map((b) => `${num(b.at / 1000, 1)} s`).join(', ')}; the first three bursts on the same keys, the last on new ones); ` +
    `${num(updates)} stock updates (Poisson, popular rows more often) plus ${num(pairs)} quick pairs: an update, a read of the id as soon as it finished (which starts a load), and a second update ${plan.pairGapMs} ms later while that load is in flight; an update changes the origin's row (version + 1), then calls the cache's own invalidation and counts as finished when that resolves. ` +
    `The origin (in the parent process, reached over IPC) serves at most ${ORIGIN_LIMIT} calls at once and queues the rest, takes a log-normal ${LATENCY_MEDIAN_MS} ms median (σ 0.6, p99 ≈ 20 ms) per call, reads the row's version when its service starts, and is down from ${num(o.from / 1000, 1)} s to ${num(o.to / 1000, 1)} s (every call fails after its service time). ` +
    `Each contender runs in child processes of its own (\`node --import tsx bench/w12-day-child.ts\`), one after another; an event fires from a timer at its instant and is handled after the I/O the process already received (\`setImmediate\`), as a request arriving on a socket would be. The shapes: the one-instance shape (one process, every event) and the ${INSTANCES}-instance shape (${INSTANCES} processes started on one instant, each event sent to one of them at random, as a load balancer would; ${redisNote || 'no Redis reachable'}). One day per contender and shape (a day takes real time; ${num(plan.dayMs / 1000)} s each). ` +
    `Grace / stale windows are ${GRACE_TTLS} × ttl wherever a contender has one, the load deadline ${num(LOAD_DEADLINE_MS)} ms wherever it has one.`
  const notes = [
    '"origin calls": calls the origin received over the day; "peak concurrent": most calls arrived and not yet answered at one moment (queued ones included); "during outage": calls that arrived while it was down (each fails).',
    `"failed reads": reads that rejected or answered no value; "of them answerable": failed reads that a cache holding every answer coherently could have served: before the read started, the origin had answered (to any instance) a value at least as new as every finished update of the id, read at most ttl + grace (${num(plan.ttl + GRACE_TTLS * plan.ttl)} ms) before. The rest (reads during the outage of ids not loaded since their last update, or never) no contender can answer.`,
    `"p99 after ${OPENING_MS / 1000} s": over the reads that arrived after the opening, where every cache is cold and the ${plan.hotRows} hot rows and the first reads of everything else queue at the origin together (about 1 % of the day's reads, so the whole day's p99 sits on that queue).`,
    '"max lag": the longest an instance fired an event after its instant (its event loop was busy). "load avg": the machine\'s 1-minute load average as the day ended, other processes included (2 cores): a day run while the machine was busy elsewhere shows it in its lag, its L2 timeouts and its tail. Latency is from a read\'s instant in the trace (its arrival) to its answer, so event-loop lag in a busy instance counts; p50 / p99 / max are over every read, failed ones included.',
    '"stale after update": reads that returned a version older than an update of the same id that had finished (origin changed, invalidation resolved) before the read started; across instances, an instance without a bus keeps serving its own copy until its ttl (or grace) runs out. "stale lag max": for those, the most ms from the update finishing to the stale read starting (a few ms: a bus message still on its way; about a ttl: no bus). "oldest in outage": the most ms between the origin reading a value and a read that started during the outage answering it.',
    "Redis commands: the INFO commandstats delta over the day (the measurement's own INFO calls left out), every instance together, counting the commands a Lua script runs (EchoStore's scripts run GET, STRLEN, SET and the like inside each EVALSHA) as well as the scripts; CPU: process.cpuUsage() of each instance over the day (user + system). Redis CPU: used_cpu_user + used_cpu_sys delta of the server.",
    `Origin calls per ${BIN_MS} ms across the day, per contender and shape, are plotted in bench/day.svg.`,
    ...(without.length > 0 ? [`Not in W12 (no day adapter; the day's floor is floor:map, the naive cache-aside): ${without.join(', ')}.`] : []),
  ]
  progress(`W12 · ${runs} days in ${num((performance.now() - started) / 1000, 1)} s`)
  const panel = (title: string, rows: DayRow[]): DayPanel => ({ title, series: rows.map((r) => ({ name: r.name, perBin: r.figures.perBin, total: r.figures.originCalls })) })
  return {
    metrics,
    plan,
    panels: [panel('one instance', one), ...(four.length > 0 ? [panel(`${INSTANCES} instances sharing Redis`, four)] : [])],
    section: { id: 'W12', title: "a service's day", method, tables, notes },
  }
}
