/**
 * W8c: EchoStore's Redis adapters on a Redis Cluster against one node, in one run: the L2-hit fill
 * latency (p50/p99), the bus's propagation (publish called → handler ran in another bus), the
 * 4-process herd with `lease` (loads per herd), and the spread of one table's commands over the
 * masters (the busiest master's script runs over the mean).
 */
import { performance } from 'node:perf_hooks'
import { Redis } from 'ioredis'
import type { Table as EchoTable } from '../../src/index.js'
import { num, sig, type Table } from '../lib/format.js'
import { progress } from '../lib/progress.js'
import { redisUnreachable } from '../lib/redis.js'
import { median, percentile } from '../lib/stats.js'
import type { BenchContext } from './context.js'

type EchoStore = typeof import('../../src/index.js') & typeof import('../../src/redis.js')
type Where = { url: string | string[] }

/** The cluster's seed nodes: BENCH_CLUSTER_URLS (comma-separated), or the local one `.ci/redis-topology.sh` starts. */
export const CLUSTER_URLS = (process.env.BENCH_CLUSTER_URLS ?? [7100, 7101, 7102, 7103, 7104, 7105].map((p) => `redis://127.0.0.1:${p}`).join(',')).split(',')

/** L2-hit fills per setting at scale 1, bus messages per setting, random gets for the spread. */
const HITS = 2_000
const MESSAGES = 2_000
const SPREAD_GETS = 10_000

/** What one setting measured. */
export interface SettingFigures {
  hitP50Us: number
  hitP99Us: number
  propagationP50Us: number
  propagationP99Us: number
}

/** Table B (a cold L1) reads, one fetch in flight, the ids table A filled: each fill's µs. */
async function l2Hits(es: EchoStore, where: Where, prefix: string, n: number): Promise<{ us: number[]; failures: number }> {
  const [l2A, l2B] = [es.redisL2({ ...where, prefix }), es.redisL2({ ...where, prefix })]
  const base = { name: 'w8c', ttl: 600_000, sweepInterval: 600_000 }
  const a: EchoTable<string> = es.createTable<string>({ ...base, l2: l2A })
  const ids = Array.from({ length: n }, (_, i) => `hit-${i}`)
  for (const id of ids) await a.fetch(id, () => `value of ${id}`)
  const b: EchoTable<string> = es.createTable<string>({ ...base, l2: l2B })
  const us: number[] = []
  for (const id of ids) {
    const start = performance.now()
    await b.fetch(id, () => 'loaded again')
    us.push((performance.now() - start) * 1000)
  }
  const stats = b.stats()
  await Promise.all([a.close(), b.close()])
  await Promise.all([l2A.close(), l2B.close()])
  return { us, failures: stats.l2_errors + stats.l2_timeouts + stats.l2_skipped }
}

/** One message at a time from bus A to bus B (its own connections): publish called → B's handler, in µs. */
async function propagation(es: EchoStore, where: Where, channel: string, n: number): Promise<number[]> {
  const [a, b] = [es.redisBus({ ...where, channel }), es.redisBus({ ...where, channel })]
  await Promise.all([a.subscribed(), b.subscribed()])
  let arrived: (() => void) | undefined
  b.subscribe((d) => d.type === 'message' && arrived?.())
  const us: number[] = []
  for (let i = 0; i < n; i++) {
    const heard = new Promise<void>((resolve) => (arrived = resolve))
    const start = performance.now()
    await a.publish({ table: 'w8c', id: i, version: 1, kind: 'invalidate', origin: 'w8c' })
    await heard
    us.push((performance.now() - start) * 1000)
  }
  await Promise.all([a.close(), b.close()])
  return us
}

/** The masters' script runs (EVALSHA + EVAL) by port, from INFO commandstats. */
async function scriptRuns(): Promise<Map<string, number>> {
  const seed = new Redis(CLUSTER_URLS[0]!)
  const slots = (await seed.call('CLUSTER', 'SLOTS')) as [number, number, [string, number]][]
  seed.disconnect()
  const counts = new Map<string, number>()
  for (const [, , [host, port]] of slots) {
    const key = `${host}:${port}`
    if (counts.has(key)) continue
    const node = new Redis({ host, port })
    const info = await node.info('commandstats')
    node.disconnect()
    counts.set(
      key,
      [...info.matchAll(/cmdstat_(?:evalsha|eval):calls=(\d+)/g)].reduce((n, m) => n + Number(m[1]), 0),
    )
  }
  return counts
}

/** 10,000 gets of random ids of one (cleared) table: the busiest master's share over the mean. */
async function spread(es: EchoStore, prefix: string, gets: number): Promise<{ ratio: number; perMaster: number[] }> {
  const store = es.redisL2({ url: CLUSTER_URLS, prefix, timeout: 1_000 })
  await store.clear('w8c-spread')
  await store.get('w8c-spread', 'warm')
  const before = await scriptRuns()
  for (let i = 0; i < gets; i += 500) await Promise.all(Array.from({ length: 500 }, () => store.get('w8c-spread', `id-${Math.floor(Math.random() * 1e9)}`)))
  const after = await scriptRuns()
  await store.close()
  const perMaster = [...after].map(([node, n]) => n - (before.get(node) ?? 0))
  const mean = perMaster.reduce((a, b) => a + b, 0) / perMaster.length
  return { ratio: Math.max(...perMaster) / mean, perMaster }
}

/** Deletes every key under `prefix` on every master (SCAN + DEL per node); how many. */
export async function deleteOnCluster(prefix: string): Promise<number> {
  const seed = new Redis(CLUSTER_URLS[0]!)
  const slots = (await seed.call('CLUSTER', 'SLOTS')) as [number, number, [string, number]][]
  seed.disconnect()
  let deleted = 0
  for (const [host, port] of new Map(slots.map(([, , [h, p]]) => [`${h}:${p}`, [h, p] as const])).values()) {
    const node = new Redis({ host, port })
    let cursor = '0'
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1_000)
      cursor = next
      for (const key of keys) deleted += await node.del(key)
    } while (cursor !== '0')
    node.disconnect()
  }
  return deleted
}

/** Why the cluster cannot be used, or undefined. */
export async function clusterUnreachable(): Promise<string | undefined> {
  return redisUnreachable(CLUSTER_URLS[0]!)
}

/**
 * Runs W8c's single-node and cluster measurements (the herd is run by W8 itself, through
 * `runHerd`, and passed back in `herd`): the table and the metrics.
 */
export async function runW8c(ctx: BenchContext, prefix: string, runHerd: () => Promise<{ loads: number[] }>): Promise<{ table: Table; notes: string[]; metrics: Record<string, number> }> {
  const es: EchoStore = { ...(await import('../../src/index.js')), ...(await import('../../src/redis.js')) }
  const hits = Math.max(100, Math.round(HITS * ctx.cfg.scale))
  const messages = Math.max(100, Math.round(MESSAGES * ctx.cfg.scale))
  const settings: [string, Where][] = [
    ['one node', { url: ctx.cfg.redisUrl }],
    ['cluster (3 masters + 3 replicas)', { url: CLUSTER_URLS }],
  ]
  const figures = new Map<string, SettingFigures>()
  // Interleaved: each repetition measures both settings, in rotating order.
  const samples = new Map<string, { hit: number[]; bus: number[]; failures: number }>(settings.map(([name]) => [name, { hit: [], bus: [], failures: 0 }]))
  for (let rep = 0; rep < ctx.cfg.reps; rep++) {
    for (const [name, where] of rep % 2 === 0 ? settings : [...settings].reverse()) {
      progress(`W8c ${name} · repetition ${rep + 1}/${ctx.cfg.reps}`)
      const s = samples.get(name)!
      const run = await l2Hits(es, where, `${prefix}c${rep}:`, hits)
      s.hit.push(...run.us)
      s.failures += run.failures
      s.bus.push(...(await propagation(es, where, `${prefix}bus${rep}`, messages)))
    }
  }
  for (const [name, s] of samples) {
    figures.set(name, { hitP50Us: percentile(s.hit, 50), hitP99Us: percentile(s.hit, 99), propagationP50Us: percentile(s.bus, 50), propagationP99Us: percentile(s.bus, 99) })
  }
  progress('W8c cluster · the 4-process herd with lease')
  const herd = await runHerd()
  progress('W8c cluster · the spread of one table over the masters')
  const { ratio, perMaster } = await spread(es, `${prefix}spread:`, SPREAD_GETS)
  const single = figures.get(settings[0]![0])!
  const cluster = figures.get(settings[1]![0])!
  const metrics: Record<string, number> = {
    singleHitP50Us: single.hitP50Us,
    singleHitP99Us: single.hitP99Us,
    clusterHitP50Us: cluster.hitP50Us,
    clusterHitP99Us: cluster.hitP99Us,
    singlePropagationP50Us: single.propagationP50Us,
    singlePropagationP99Us: single.propagationP99Us,
    clusterPropagationP50Us: cluster.propagationP50Us,
    clusterPropagationP99Us: cluster.propagationP99Us,
    clusterLeaseLoadsMedian: median(herd.loads),
    clusterLeaseLoadsMax: Math.max(...herd.loads),
    clusterMasterOverMean: ratio,
  }
  const rows = [...figures].map(([name, f]) => [name, sig(f.hitP50Us), sig(f.hitP99Us), num(samples.get(name)!.failures), sig(f.propagationP50Us), sig(f.propagationP99Us)])
  return {
    metrics,
    table: {
      caption: `**W8c: one node against a cluster** (${num(hits)} L2-hit fills and ${num(messages)} bus messages per setting per repetition, ${ctx.cfg.reps} repetitions interleaved; µs)`,
      headers: ['setting', 'L2-hit fill p50 µs', 'L2-hit fill p99 µs', 'L2 failures (fell through to the loader)', 'bus propagation p50 µs', 'bus propagation p99 µs'],
      rows,
    },
    notes: [
      `Cluster herd: ${PROCESS_NOTE} with \`lease: true\`, loads per herd ${herd.loads.join(', ')} (median ${sig(median(herd.loads))}, max ${num(Math.max(...herd.loads))}).`,
      `Cluster spread: ${num(SPREAD_GETS)} gets of random ids of one cleared table; script runs per master ${perMaster.map((n) => num(n)).join(' / ')}: the busiest master ran ${sig(ratio)}× the mean (no hot spot: each table's ids are in 1024 buckets, each its own slot with its own clear generation).`,
      'Bus propagation is one message at a time from one bus to another with its own connections (publish called → the other bus\u2019s handler ran): the time an `invalidate` or `put` takes to reach the other instances once it resolved is at most this plus their event-loop delay. On the cluster it is sharded pub/sub (SPUBLISH to the channel\u2019s master).',
    ],
  }
}

const PROCESS_NOTE = '4 processes, each a herd of fetches of one cold id at once'
