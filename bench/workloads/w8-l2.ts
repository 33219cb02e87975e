import { spawn, type ChildProcess } from 'node:child_process'
import { performance } from 'node:perf_hooks'
import type { Redis } from 'ioredis'
import type { Table as EchoTable } from '../../src/index.js'
import type { FromChild, HerdReport, ToChild } from '../l2-herd-child.js'
import { scaled } from '../lib/config.js'
import { num, pm, ratio, sig, type Section, type Table } from '../lib/format.js'
import { interleave } from '../lib/interleave.js'
import { progress } from '../lib/progress.js'
import { connectClient, connectRedis, deletePrefix, quitRedis, redisUnreachable, redisVersion, runPrefix, type RedisClientName } from '../lib/redis.js'
import { median, percentile, spreadPct } from '../lib/stats.js'
import type { BenchContext, Metrics, WorkloadResult } from './context.js'
import { runW8d } from './w8-burst.js'
import { CLUSTER_URLS, clusterUnreachable, deleteOnCluster, runW8c } from './w8-cluster.js'

/** The core entry and the Redis entry, loaded only when W8 runs. */
type EchoStore = typeof import('../../src/index.js') & typeof import('../../src/redis.js') & typeof import('../../src/limits.js')

/** W8a: fills per case per repetition at scale 1, and warm-up fills per case (once, before the repetitions). */
const FILLS = 2_000
const WARMUP = 200
/** W8b: processes, herd size at scale 1, the loader's duration, the stagger, rounds per mode at scale 1. */
const PROCESSES = 4
const HERD = 1_000
const LOADER_MS = 20
const STAGGER_MS = 30
const ROUNDS = 10
/** W8b bounds: child start-up (tsx compiles src/ on first import), one step of a round, and the exit. */
const READY_TIMEOUT_MS = 60_000
const STEP_TIMEOUT_MS = 20_000
const EXIT_TIMEOUT_MS = 5_000

/** The row W8a's loaders return: a small JSON object (~150 bytes encoded), one shared instance. */
const VALUE = Object.freeze({
  id: 'sku-000000',
  name: 'Product 000000',
  tags: ['kitchen', 'steel', 'sale'],
  price: Object.freeze({ amount: 1999, currency: 'EUR' }),
  updatedAt: 1_700_000_000_000,
})
type Value = typeof VALUE

// ---------------------------------------------------------------------------------------------
// W8a: fill latency
// ---------------------------------------------------------------------------------------------

interface FillCase {
  name: string
  does: string
}

const CASES: readonly FillCase[] = [
  { name: 'L2 hit', does: 'table B (cold L1, its own connection) reads ids table A filled: one Redis round trip (Lua GET + PTTL) and a JSON decode, no loader' },
  { name: 'L2 hit (node-redis)', does: 'the same, table B on a node-redis client (`createClient` + `connect()`) instead of ioredis' },
  { name: 'loader + L2', does: 'L2 read (a miss), the immediate loader, the version-guarded L2 write (awaited before the answer)' },
  { name: 'loader, no L2', does: 'the flight alone, an immediate loader, no Redis' },
]

interface FillRun {
  medianUs: number
  p99Us: number
  meanUs: number
  fills: number
  loads: number
  l2Hits: number
  l2Failures: number
}

/** Reads `ids` one fetch at a time through `table`; each fill's latency in µs (`fetch` called → value in hand). */
async function timeFills(table: EchoTable<Value>, ids: readonly string[], loader: () => Value): Promise<number[]> {
  const us = new Array<number>(ids.length)
  for (let i = 0; i < ids.length; i++) {
    const start = performance.now()
    const value = await table.fetch(ids[i]!, loader)
    us[i] = (performance.now() - start) * 1000
    if (value === undefined) throw new Error(`W8a: fetch(${ids[i]}) answered undefined`)
  }
  return us
}

async function runW8a(es: EchoStore, ctx: BenchContext, prefix: string, clientA: Redis, clientB: Redis) {
  const fills = scaled(ctx.cfg, FILLS, 100)
  const warm = scaled(ctx.cfg, WARMUP, 20)
  const nodeRedis = await connectClient('node-redis', ctx.cfg.redisUrl)
  const l2A = es.redisL2({ client: clientA, prefix })
  const l2B = es.redisL2({ client: clientB, prefix })
  const l2N = es.redisL2({ client: nodeRedis.client, prefix })
  const base = { name: 'w8-latency', ttl: 600_000, sweepInterval: 600_000 }
  const ids = (tag: string, n: number) => Array.from({ length: n }, (_, i) => `${tag}-${i}`)

  async function measure(fc: FillCase, tag: string, n: number): Promise<FillRun> {
    let calls = 0
    const loader = () => (calls++, VALUE)
    const list = ids(`${KEYS[fc.name]}-${tag}`, n)
    let table: EchoTable<Value>
    if (fc.name.startsWith('L2 hit')) {
      const a = es.createTable<Value>({ ...base, l2: l2A })
      for (const id of list) await a.fetch(id, () => VALUE)
      await a.close()
      table = es.createTable<Value>({ ...base, l2: fc.name === 'L2 hit' ? l2B : l2N })
    } else {
      table = es.createTable<Value>(fc.name === 'loader + L2' ? { ...base, l2: l2A } : base)
    }
    const us = await timeFills(table, list, loader)
    const s = table.stats()
    await table.close()
    if (s.loads !== calls) throw new Error(`W8a ${fc.name}: stats().loads ${s.loads} but the loader counted ${calls} calls`)
    return {
      medianUs: median(us),
      p99Us: percentile(us, 99),
      meanUs: us.reduce((sum, x) => sum + x, 0) / us.length,
      fills: us.length,
      loads: s.loads,
      l2Hits: s.l2_hits,
      l2Failures: s.l2_errors + s.l2_timeouts + s.l2_skipped,
    }
  }

  try {
    progress(`W8a fill latency · warm-up, ${num(warm)} fills per case`)
    for (const fc of CASES) await measure(fc, 'warm', warm)
    const runs = await interleave('W8a fill latency', CASES, ctx.cfg.reps, (fc, rep) => measure(fc, `r${rep}`, fills))
    return { fills, warm, runs }
  } finally {
    await Promise.all([l2A.close(), l2B.close(), l2N.close()])
    await nodeRedis.close()
  }
}

/** Each W8a case's key in the metrics (and, shortened, in its ids). */
const KEYS: Record<string, string> = { 'L2 hit': 'l2Hit', 'L2 hit (node-redis)': 'l2HitNodeRedis', 'loader + L2': 'loadL2', 'loader, no L2': 'loadNoL2' }

function w8aTable(fills: number, runs: Map<string, FillRun[]>, metrics: Record<string, number>): Table {
  const bare = runs.get('loader, no L2')!
  const bareMedian = median(bare.map((r) => r.medianUs))
  const bareP99 = median(bare.map((r) => r.p99Us))
  const rows = CASES.map((fc) => {
    const list = runs.get(fc.name)!
    const medians = list.map((r) => r.medianUs)
    const med = median(medians)
    const p99 = median(list.map((r) => r.p99Us))
    const total = (key: 'fills' | 'loads' | 'l2Hits' | 'l2Failures') => list.reduce((sum, r) => sum + r[key], 0)
    metrics[`${KEYS[fc.name]}Us`] = med
    metrics[`${KEYS[fc.name]}P99Us`] = p99
    return [
      fc.name,
      fc.does,
      sig(med),
      pm(spreadPct(medians)),
      sig(p99),
      sig(median(list.map((r) => r.meanUs))),
      ratio(med, bareMedian),
      ratio(p99, bareP99),
      `${num(total('loads'))} / ${num(total('fills'))}`,
      num(total('l2Hits')),
      num(total('l2Failures')),
    ]
  })
  return {
    caption: `**W8a: fill latency** (${num(fills)} cold ids per case per repetition, one fetch in flight)`,
    headers: ['case', 'what a fill does', 'median µs', 'spread', 'p99 µs', 'mean µs', '× no-L2 (median)', '× no-L2 (p99)', 'loader calls / fills', 'l2_hits', 'L2 failures'],
    rows,
  }
}

// ---------------------------------------------------------------------------------------------
// W8b: a herd across processes
// ---------------------------------------------------------------------------------------------

/** One child process with its IPC channel: messages are queued and taken in order with a bound. */
class HerdChild {
  readonly proc: ChildProcess
  private readonly queue: FromChild[] = []
  private waiter: ((message: FromChild | Error) => void) | undefined
  private gone: Error | undefined
  private stderr = ''
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>

  constructor(root: string, redisUrl: string, args: string[], clusterUrls?: readonly string[]) {
    this.proc = spawn(process.execPath, ['--import', 'tsx', 'bench/l2-herd-child.ts', ...args], {
      cwd: root,
      env: { ...process.env, REDIS_URL: redisUrl, ...(clusterUrls && { ECHOSTORE_CLUSTER_URLS: clusterUrls.join(',') }) },
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    })
    this.proc.stderr!.setEncoding('utf8')
    this.proc.stderr!.on('data', (chunk: string) => (this.stderr = (this.stderr + chunk).slice(-4_000)))
    this.proc.on('message', (message: FromChild) => this.deliver(message))
    this.exited = new Promise((resolve) => {
      this.proc.on('exit', (code, signal) => {
        this.fail(new Error(`W8b child ${this.proc.pid} exited (${code ?? signal})${this.stderr ? `: ${this.stderr.trim()}` : ''}`))
        resolve({ code, signal })
      })
    })
    this.proc.on('error', (error) => this.fail(error))
  }

  private deliver(message: FromChild | Error): void {
    const waiter = this.waiter
    if (waiter !== undefined) {
      this.waiter = undefined
      waiter(message)
    } else if (!(message instanceof Error)) this.queue.push(message)
  }

  private fail(error: Error): void {
    this.gone ??= error
    this.deliver(error)
  }

  get running(): boolean {
    return this.proc.exitCode === null && this.proc.signalCode === null
  }

  send(message: ToChild): void {
    if (!this.proc.connected) throw this.gone ?? new Error(`W8b child ${this.proc.pid} has no IPC channel`)
    this.proc.send(message)
  }

  /** The next message, which must be of `type`, within `ms`. */
  async expect<T extends FromChild['type']>(type: T, ms: number): Promise<Extract<FromChild, { type: T }>> {
    let message: FromChild | Error | undefined = this.queue.shift()
    if (message === undefined) {
      if (this.gone !== undefined) throw this.gone
      let timer: ReturnType<typeof setTimeout> | undefined
      message = await new Promise<FromChild | Error>((resolve) => {
        this.waiter = resolve
        timer = setTimeout(() => {
          this.waiter = undefined
          resolve(new Error(`W8b child ${this.proc.pid}: no "${type}" within ${ms} ms${this.stderr ? `; stderr: ${this.stderr.trim()}` : ''}`))
        }, ms)
      })
      clearTimeout(timer)
    }
    if (message instanceof Error) throw message
    if (message.type === 'failed') throw new Error(`W8b child ${this.proc.pid} failed: ${message.message}`)
    if (message.type !== type) throw new Error(`W8b child ${this.proc.pid}: expected "${type}", got "${message.type}"`)
    return message as Extract<FromChild, { type: T }>
  }
}

/** Asks every child to exit, waits up to EXIT_TIMEOUT_MS, then SIGKILLs any still running. Returns how each ended. */
async function stopChildren(children: readonly HerdChild[]): Promise<string[]> {
  for (const c of children) {
    if (c.running && c.proc.connected) {
      try {
        c.send({ type: 'exit' })
      } catch {
        // it is on its way out; the kill below covers it
      }
    }
  }
  const bounded = (c: HerdChild) => Promise.race([c.exited, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), EXIT_TIMEOUT_MS).unref())])
  const ends = await Promise.all(children.map(bounded))
  const out: string[] = []
  for (let i = 0; i < children.length; i++) {
    const c = children[i]!
    const end = ends[i]
    if (end !== undefined) {
      out.push(end.code === 0 ? 'exit 0' : `exit ${end.code ?? end.signal}`)
      continue
    }
    if (c.running) c.proc.kill('SIGKILL')
    const killed = await Promise.race([c.exited, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 2_000).unref())])
    out.push(killed === undefined ? 'still running after SIGKILL' : `killed after ${EXIT_TIMEOUT_MS} ms`)
  }
  return out
}

interface Mode {
  name: string
  staggerMs: number
  /** Tables with `lease: true` (and a Redis bus): one load across the processes. */
  lease: boolean
  /** The key of its figures in the metrics. */
  key: string
  /** The Redis client the child processes hand EchoStore. */
  client: RedisClientName
}

const MODES: readonly Mode[] = [
  { name: 'all at once', staggerMs: 0, lease: false, key: 'together', client: 'ioredis' },
  { name: `staggered ${STAGGER_MS} ms`, staggerMs: STAGGER_MS, lease: false, key: 'staggered', client: 'ioredis' },
  { name: 'all at once, with lease', staggerMs: 0, lease: true, key: 'lease', client: 'ioredis' },
  { name: 'all at once (node-redis)', staggerMs: 0, lease: false, key: 'nodeRedisTogether', client: 'node-redis' },
  { name: 'all at once, with lease (node-redis)', staggerMs: 0, lease: true, key: 'nodeRedisLease', client: 'node-redis' },
]

const ORDINAL = ['1st', '2nd', '3rd', '4th']

/** One round: per start position (0 = first to start), that process's report. */
type Round = HerdReport[]

async function runW8b(ctx: BenchContext, prefix: string, modes: readonly Mode[] = MODES, clusterUrls?: readonly string[]) {
  const herd = scaled(ctx.cfg, HERD, 50)
  const rounds = Math.max(ctx.cfg.reps, scaled(ctx.cfg, ROUNDS, 3))
  // Per client the modes use, PROCESSES child processes of its own.
  const clients = [...new Set(modes.map((m) => m.client))]
  progress(`W8b herd · starting ${PROCESSES} child processes per client (${clients.join(', ')}; node --import tsx bench/l2-herd-child.ts)${clusterUrls ? ' on the cluster' : ''}`)
  const sets = new Map(
    clients.map((client) => [client, Array.from({ length: PROCESSES }, () => new HerdChild(ctx.cfg.root, ctx.cfg.redisUrl, [prefix, String(herd), String(LOADER_MS), client], clusterUrls))]),
  )
  const children = [...sets.values()].flat()
  let ends: string[] = []
  let runs: Map<string, Round[]>
  try {
    const t = performance.now()
    await Promise.all(children.map((c) => c.expect('ready', READY_TIMEOUT_MS)))
    progress(`W8b herd · ${children.length} processes connected to Redis in ${num(performance.now() - t)} ms`)
    runs = await interleave(`W8b herd ×${PROCESSES} processes`, modes, rounds, async (mode, rep): Promise<Round> => {
      const id = `cold-${rep}-${mode.key}`
      const children = sets.get(mode.client)!
      for (const c of children) c.send({ type: 'prepare', id, lease: mode.lease })
      await Promise.all(children.map((c) => c.expect('prepared', STEP_TIMEOUT_MS)))
      // Which process starts first rotates with the round; position k starts k × stagger after the go.
      const position = (slot: number) => (slot - rep + PROCESSES * rounds) % PROCESSES
      for (let slot = 0; slot < PROCESSES; slot++) children[slot]!.send({ type: 'go', delayMs: position(slot) * mode.staggerMs })
      const reports = (await Promise.all(children.map((c) => c.expect('result', STEP_TIMEOUT_MS)))).map((m) => m.report)
      // Rows by start order: the planned one when staggered, the observed one when started together.
      if (mode.staggerMs === 0) return reports.sort((x, y) => x.startedAt - y.startedAt)
      const byPosition: Round = new Array(PROCESSES)
      for (let slot = 0; slot < PROCESSES; slot++) byPosition[position(slot)] = reports[slot]!
      return byPosition
    })
  } finally {
    ends = await stopChildren(children)
    progress(`W8b herd · child processes ended: ${ends.join(', ')}`)
  }
  return { herd, rounds, runs, ends }
}

/** The roles a fetch of a W8b herd plays, by what its process did. */
const ROLES = ['loader call', 'coalesced join', 'lease waiter', 'L2 hit'] as const

/** Each fetch's latency by role: the first fetch of a process that loaded is its loader call, the rest there coalesced joins; in a process answered by another's fill while it waited on the lease, lease waiters; otherwise L2 hits. */
function latencyByRole(runs: Map<string, Round[]>, metrics: Record<string, number>): Table {
  const rows: string[][] = []
  for (const mode of MODES) {
    const byRole = new Map<(typeof ROLES)[number], number[]>(ROLES.map((role) => [role, []]))
    for (const report of runs.get(mode.name)!.flat()) {
      const [first, ...rest] = report.latenciesMs
      if (report.loaderCalls > 0) {
        byRole.get('loader call')!.push(first!)
        byRole.get('coalesced join')!.push(...rest)
      } else byRole.get(report.leaseWaited > 0 ? 'lease waiter' : 'L2 hit')!.push(...report.latenciesMs)
    }
    for (const role of ROLES) {
      const list = byRole.get(role)!
      if (list.length === 0) continue
      const [p50, p99] = [percentile(list, 50), percentile(list, 99)]
      metrics[`${mode.key} ${role} p50Ms`] = p50
      metrics[`${mode.key} ${role} p99Ms`] = p99
      rows.push([mode.name, role, num(list.length), sig(p50), sig(p99)])
    }
  }
  return {
    caption: `**W8b latency by role** (each fetch, its call → its answer, over every round; ms)`,
    headers: ['start', 'role', 'fetches', 'p50 ms', 'p99 ms'],
    rows,
  }
}

/** `4 ×8, 3 ×2`: how often each value occurred, most frequent first. */
function distribution(values: readonly number[]): string {
  const counts = new Map<number, number>()
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1)
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1] || a[0] - b[0])
    .map(([v, n]) => `${v} ×${n}`)
    .join(', ')
}

function w8bTables(herd: number, rounds: number, runs: Map<string, Round[]>, metrics: Record<string, number>): { tables: Table[]; notes: string[] } {
  const summary: string[][] = []
  const perProcess: string[][] = []
  const notes: string[] = []
  for (const mode of MODES) {
    const list = runs.get(mode.name)!
    const loads = list.map((round) => round.reduce((sum, r) => sum + r.loaderCalls, 0))
    const hits = list.map((round) => round.reduce((sum, r) => sum + r.l2Hits, 0))
    const skew = list.map((round) => Math.max(...round.map((r) => r.startedAt)) - Math.min(...round.map((r) => r.startedAt)))
    const failures = list.reduce((sum, round) => sum + round.reduce((s, r) => s + r.l2Failures, 0), 0)
    const bad = list.reduce((sum, round) => sum + round.filter((r) => !r.identical || r.answered !== herd).length, 0)
    const key = mode.key
    metrics[`${key}LoadsMedian`] = median(loads)
    metrics[`${key}LoadsMax`] = Math.max(...loads)
    metrics[`${key}L2HitsMedian`] = median(hits)
    summary.push([
      mode.name,
      num(list.length),
      `${num(Math.min(...loads))} / ${sig(median(loads))} / ${num(Math.max(...loads))}`,
      distribution(loads),
      `${num(Math.min(...hits))} / ${sig(median(hits))} / ${num(Math.max(...hits))}`,
      `${sig(median(skew))} / ${sig(Math.max(...skew))}`,
      num(failures),
      bad === 0 ? 'yes' : `NO (${bad} process-rounds)`,
    ])
    for (let p = 0; p < PROCESSES; p++) {
      const at = list.map((round) => round[p]!)
      const first = list.map((round) => round[0]!)
      const offsets = list.map((round) => round[p]!.startedAt - round[0]!.startedAt)
      const afterFill = p === 0 ? '—' : `${at.filter((r, i) => r.startedAt > first[i]!.doneAt).length} / ${at.length}`
      perProcess.push([
        mode.name,
        mode.staggerMs === 0 ? `${ORDINAL[p]} to start` : `${ORDINAL[p]} to start (+${p * mode.staggerMs} ms)`,
        `${sig(median(offsets))}`,
        afterFill,
        distribution(at.map((r) => r.loaderCalls)),
        distribution(at.map((r) => r.l2Hits)),
        `${at.filter((r) => r.fromOtherProcess).length} / ${at.length}`,
        sig(median(at.map((r) => r.coalesced))),
        sig(median(at.map((r) => r.herdMs))),
        num(at.reduce((s, r) => s + r.l2Failures, 0)),
      ])
    }
  }
  const latency = latencyByRole(runs, metrics)
  const all = MODES.flatMap((mode) => runs.get(mode.name)!.flat())
  const disagree = all.filter((r) => r.loads !== r.loaderCalls).length
  notes.push(
    `Loader calls are counted by each child's own loader (the origin work); its table's \`stats().loads\` ${disagree === 0 ? `agreed in all ${num(all.length)} process-rounds` : `DISAGREED in ${num(disagree)} of ${num(all.length)} process-rounds`}. A failed L2 read ("L2 failures") falls through to the loader, so it would show as an extra loader call.`,
    `"All at once" is bounded by ${PROCESSES} (one flight per process, process-local coalescing); L2 narrows it only for a process whose L2 read comes after another's fill landed, which a simultaneous start (skew well under the ${LOADER_MS} ms load) rarely gives: without \`lease\`, EchoStore takes no cross-process lock, so concurrent cold misses in different processes each load once. With \`lease: true\` (and a Redis bus), the process whose flight takes the id's lease loads; the others wait for its fill, woken by its bus message, and answer from L2: one load per herd. Staggered by ${STAGGER_MS} ms (more than the ${LOADER_MS} ms load and its L2 write), later processes find the first fill in L2: an \`l2_hit\`, no loader call, "herd ms" one Redis round trip instead of the load.`,
  )
  return {
    notes,
    tables: [
      {
        caption: `**W8b: one cold id, a herd of ${num(herd)} fetches in each of ${PROCESSES} processes** (loader ${LOADER_MS} ms, real timer; ${num(rounds)} rounds per mode)`,
        headers: [
          'start',
          'rounds',
          'loader calls across processes (min / median / max)',
          'loader calls: rounds',
          'l2_hits across processes (min / median / max)',
          'start skew ms (median / max)',
          'L2 failures',
          'every fetch answered, one object per process',
        ],
        rows: summary,
      },
      latency,
      {
        caption: '**W8b per process** (medians over rounds; distributions as `value ×rounds`)',
        headers: [
          'start',
          'process',
          'started ms after the first',
          'started after the first fill landed',
          'loader calls',
          'l2_hits',
          'answered by another process',
          'coalesced',
          'herd ms',
          'L2 failures',
        ],
        rows: perProcess,
      },
    ],
  }
}

// ---------------------------------------------------------------------------------------------
// W8
// ---------------------------------------------------------------------------------------------

function skipped(reason: string): WorkloadResult {
  progress(`W8 skipped: ${reason}`)
  return {
    metrics: new Map(),
    section: {
      id: 'W8',
      title: 'Redis L2',
      method: `**Skipped: ${reason}.** W8 measures EchoStore's Redis L2 (an L2-hit fill against a loader fill, and a herd across ${PROCESSES} processes on one cold id); start a Redis (\`redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no\`) or point REDIS_URL at one, then run \`BENCH_WORKLOADS=W8 npm run bench\`.`,
      tables: [],
      notes: [],
    },
  }
}

/**
 * W8 Redis L2, EchoStore only. W8a: the latency of one fill, one fetch in flight, for an L2-hit
 * fill, a loader fill through the L2 table and a loader fill without L2, in interleaved
 * repetitions. W8b: a herd on one cold id in each of 4 child processes sharing a Redis prefix,
 * started together and then staggered: loader calls across processes and l2_hits per process.
 * W8d: a cold start, fresh processes each firing a burst of cold fills, with and without lease:
 * L2 timeouts and breaker openings.
 * Keys go under a random prefix, deleted at the end (SCAN + DEL). Skipped, not failed, when
 * Redis does not answer or EchoStore is not selected.
 */
export async function runW8(ctx: BenchContext): Promise<WorkloadResult> {
  if (!ctx.contenders.some((c) => c.name === 'echostore')) return skipped('EchoStore is not among the selected contenders (BENCH_ONLY / BENCH_SKIP)')
  const why = await redisUnreachable(ctx.cfg.redisUrl)
  if (why !== undefined) return skipped(`Redis at ${ctx.cfg.redisUrl} is not reachable (${why})`)
  const es: EchoStore = { ...(await import('../../src/index.js')), ...(await import('../../src/redis.js')), ...(await import('../../src/limits.js')) }
  const prefix = runPrefix('w8')
  const clientA = await connectRedis(ctx.cfg.redisUrl)
  const clientB = await connectRedis(ctx.cfg.redisUrl)
  const version = await redisVersion(clientA)
  progress(`W8 Redis ${version} at ${ctx.cfg.redisUrl}, key prefix ${prefix}`)
  let deleted = 0
  let ends: string[] = []
  const figures: Record<string, number> = {}
  let section: Section
  try {
    const a = await runW8a(es, ctx, prefix, clientA, clientB)
    const b = await runW8b(ctx, prefix)
    ends = b.ends
    const herdPart = w8bTables(b.herd, b.rounds, b.runs, figures)
    section = {
      id: 'W8',
      title: 'Redis L2',
      method:
        `EchoStore only, against Redis ${version} at ${ctx.cfg.redisUrl} (loopback), \`redisL2({ client, prefix })\` on connections opened and answering before use (ioredis; node-redis 6 made with \`createClient({ url, ...NODE_REDIS_FAIL_FAST })\` + \`connect()\` in the rows marked node-redis), under a random prefix per run. ` +
        `**W8a**: ${num(a.fills)} cold ids per case, one \`fetch\` in flight (the latency a caller sees, \`fetch\` called → value in hand), value a ~150-byte JSON object, ttl 10 min; cases interleaved over ${ctx.cfg.reps} repetitions whose order rotates (after ${num(a.warm)} untimed fills per case); median and p99 are per repetition, then the median over repetitions; "spread" is over the per-repetition medians; × no-L2 is against the loader fill without L2 from the same run. ` +
        `**W8b**: ${PROCESSES} child processes (\`node --import tsx bench/l2-herd-child.ts\`), each with its own connection and a fresh table (cold L1) per round on the same prefix, coordinated over IPC: each builds its table and reports ready, then the parent sends the start (with a per-process delay of 0, or k × ${STAGGER_MS} ms for the k-th to start, the order rotating per round); each fires ${num(b.herd)} \`fetch(id)\` of one cold id in one synchronous loop, with a ${LOADER_MS} ms loader on a real timer that counts its calls. The modes (all at once; staggered; all at once with \`lease: true\` and a \`redisBus\`; then all at once without and with \`lease\` again in ${PROCESSES} more child processes whose client is node-redis) alternate over ${num(b.rounds)} rounds each, a fresh id per round.`,
      tables: [w8aTable(a.fills, a.runs, figures), ...herdPart.tables],
      notes: [],
    }
    section.notes.push(...herdPart.notes)
    const burst = await runW8d(ctx, prefix)
    Object.assign(figures, burst.metrics)
    section.tables.push(burst.table)
    section.notes.push(...burst.notes)
    const clusterDown = await clusterUnreachable()
    if (clusterDown !== undefined) {
      section.notes.push(`W8c (one node against a cluster) skipped: the cluster at ${CLUSTER_URLS[0]} is not reachable (${clusterDown}); start it with \`bash .ci/redis-topology.sh start\`.`)
    } else {
      const leaseMode = MODES.find((m) => m.lease)!
      const c = await runW8c(ctx, `${prefix}c:`, async () => {
        const herd = await runW8b(ctx, `${prefix}cluster-herd:`, [leaseMode], CLUSTER_URLS)
        return { loads: herd.runs.get(leaseMode.name)!.map((round) => round.reduce((sum, r) => sum + r.loaderCalls, 0)) }
      }).finally(() => deleteOnCluster(prefix).catch(() => 0))
      Object.assign(figures, c.metrics)
      section.tables.push(c.table)
      section.notes.push(...c.notes)
    }
  } finally {
    deleted = await deletePrefix(clientA, prefix).catch(() => Number.NaN)
    await Promise.all([quitRedis(clientA), quitRedis(clientB)])
  }
  section.notes.push(
    `"L2 failures" counts L2 calls that errored, timed out (the ${es.DEFAULT_L2_TIMEOUT} ms bound) or were skipped by the breaker; such a fill falls through to the loader, so a non-zero count explains a slower tail or an extra loader call.`,
    `Child processes: ${ends.join(', ')}. Keys deleted at the end (SCAN + DEL of \`${prefix}*\`): ${Number.isNaN(deleted) ? 'clean-up failed' : num(deleted)}.`,
  )
  const metrics: Metrics = new Map([['echostore', figures]])
  return { metrics, section }
}
