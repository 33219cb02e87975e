import { performance } from 'node:perf_hooks'
import type { Contender } from '../contenders/types.js'
import { scaled } from '../lib/config.js'
import { num, pm, ratio } from '../lib/format.js'
import { interleave } from '../lib/interleave.js'
import { runConcurrent } from '../lib/pool.js'
import { makeIds, zipfSequence } from '../lib/random.js'
import { RESOLVED } from '../lib/row.js'
import { median, spreadPct } from '../lib/stats.js'
import { floorMedian, floorNamed, type BenchContext, type WorkloadResult } from './context.js'

const KEYS = 100_000
const CAPACITY = 10_000
const TTL = 1_000

/**
 * W4 Zipf: 1M reads over 100k ids drawn from Zipf(s = 1) with a seeded PRNG (the same sequence
 * for every contender), ttl 1 s, capacity 10k, concurrency 64: ops/s, hit rate (reads that did not
 * reach the loader) and loader calls (the origin work).
 */
export async function runW4(ctx: BenchContext): Promise<WorkloadResult> {
  const reads = scaled(ctx.cfg, 1_000_000, 10_000)
  const ids = makeIds('zipf-', KEYS)
  const picks = zipfSequence(reads, KEYS, 1, 42)

  async function measure(contender: Contender) {
    let loads = 0
    const cache = contender.create({ ttl: TTL, capacity: CAPACITY, loader: () => (loads++, RESOLVED) })
    const start = performance.now()
    await runConcurrent(reads, 64, (i) => cache.fetch(ids[picks[i]!]!))
    const ms = performance.now() - start
    await cache.close()
    return { opsPerSec: (reads * 1000) / ms, loads, ms }
  }

  const runs = await interleave('W4 zipf', ctx.contenders, ctx.cfg.heavyReps, measure)
  const floor = floorNamed(ctx, 'floor:single-flight')
  const floorOps = floorMedian(floor, runs, (r) => r.opsPerSec)
  const metrics = new Map<string, Record<string, number>>()
  const rows: string[][] = []
  for (const contender of ctx.contenders) {
    const list = runs.get(contender.name)!
    const ops = list.map((r) => r.opsPerSec)
    const opsPerSec = median(ops)
    const loads = median(list.map((r) => r.loads))
    metrics.set(contender.name, { opsPerSec, loads, hitRate: 1 - loads / reads })
    rows.push([contender.name, num(opsPerSec), pm(spreadPct(ops)), ratio(opsPerSec, floorOps), `${num((1 - loads / reads) * 100, 1)}%`, num(loads), num(median(list.map((r) => r.ms)))])
  }
  return {
    metrics,
    section: {
      id: 'W4',
      title: 'Zipf',
      method: `${num(reads)} reads over ${num(KEYS)} ids, Zipf(s = 1) from a seeded PRNG (one sequence for all), ttl ${TTL} ms, capacity ${num(CAPACITY)}, concurrency 64, resolved-promise loader, fresh cache per repetition. Hit rate = 1 − loader calls / reads. Median over ${ctx.cfg.heavyReps} interleaved repetitions; × floor is against the single-flight floor (FIFO eviction).`,
      tables: [{ headers: ['contender', 'ops/s', 'spread', '× floor:single-flight', 'hit rate', 'loader calls', 'run ms'], rows }],
      notes: ['A slower contender runs longer, so more of its rows outlive the 1 s ttl: loader calls depend a little on speed.'],
    },
  }
}
