import { performance } from 'node:perf_hooks'
import type { Contender } from '../contenders/types.js'
import { scaled } from '../lib/config.js'
import { num, pm, ratio } from '../lib/format.js'
import { interleave } from '../lib/interleave.js'
import { collect } from '../lib/gc.js'
import { runConcurrent } from '../lib/pool.js'
import { makeIds } from '../lib/random.js'
import { RESOLVED } from '../lib/row.js'
import { median, spreadPct } from '../lib/stats.js'
import { floorMedian, floorNamed, type BenchContext, type WorkloadResult } from './context.js'

/** Untimed cold misses before the timed ones of each repetition. */
const WARM_IDS = 20_000

/**
 * W3 cold misses: 100k distinct ids fetched once each into a fresh cache, 64 at a time, with a
 * loader that returns an already-resolved promise: ops/s, so the figure is the cost of a miss.
 */
export async function runW3(ctx: BenchContext): Promise<WorkloadResult> {
  const n = scaled(ctx.cfg, 100_000, 1_000)
  const ids = makeIds('cold-', n)
  const warmIds = makeIds('warm-', WARM_IDS)

  async function measure(contender: Contender) {
    let loads = 0
    const cache = contender.create({ ttl: 600_000, capacity: n + WARM_IDS, loader: () => (loads++, RESOLVED) })
    // Untimed cold misses first (on other ids), so the timed ones measure compiled code, as W1 does;
    // then a full GC, which a cache in a running service has long lived through: its long-lived
    // structures are in the old generation, as they would be there.
    await runConcurrent(WARM_IDS, 64, (i) => cache.fetch(warmIds[i]!))
    collect()
    loads = 0
    const start = performance.now()
    await runConcurrent(n, 64, (i) => cache.fetch(ids[i]!))
    const ms = performance.now() - start
    await cache.close()
    return { opsPerSec: (n * 1000) / ms, loads }
  }

  const runs = await interleave('W3 cold', ctx.contenders, ctx.cfg.reps, measure)
  const floor = floorNamed(ctx, 'floor:single-flight')
  const floorOps = floorMedian(floor, runs, (r) => r.opsPerSec)
  const metrics = new Map<string, Record<string, number>>()
  const rows: string[][] = []
  for (const contender of ctx.contenders) {
    const list = runs.get(contender.name)!
    const ops = list.map((r) => r.opsPerSec)
    const opsPerSec = median(ops)
    metrics.set(contender.name, { opsPerSec })
    rows.push([contender.name, num(opsPerSec), pm(spreadPct(ops)), num(1e6 / opsPerSec, 2), ratio(opsPerSec, floorOps), num(median(list.map((r) => r.loads)))])
  }
  return {
    metrics,
    section: {
      id: 'W3',
      title: 'cold misses',
      method: `${num(n)} distinct ids, each fetched once into a fresh cache (after ${num(WARM_IDS)} untimed cold misses on other ids and a full GC, so the cache's long-lived structures are in the old generation, as in a running service), concurrency 64, resolved-promise loader. Median over ${ctx.cfg.reps} interleaved repetitions. Higher is better; × floor is against the single-flight floor.`,
      tables: [{ headers: ['contender', 'ops/s', 'spread', 'µs/miss', '× floor:single-flight', 'loader calls'], rows }],
      notes: [],
    },
  }
}
