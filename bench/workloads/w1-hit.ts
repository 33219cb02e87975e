import { performance } from 'node:perf_hooks'
import type { Contender } from '../contenders/types.js'
import { num, pm, ratio, sig } from '../lib/format.js'
import { interleave } from '../lib/interleave.js'
import { runConcurrent } from '../lib/pool.js'
import { makeIds, uniformSequence } from '../lib/random.js'
import { ROW } from '../lib/row.js'
import { median, spreadPct } from '../lib/stats.js'
import { floorMedian, floorNamed, type BenchContext, type WorkloadResult } from './context.js'

const ROWS = 10_000
const MASK = (1 << 16) - 1
const BATCH = 1024

/**
 * W1 hit: 10k rows pre-filled, then `await fetch()` on random existing ids, one at a time, for a
 * time budget (500 ms at scale 1, after a quarter of that untimed to warm up): ns per read. The loader is counted during the timed reads, so a
 * contender that misses there shows it.
 */
export async function runW1(ctx: BenchContext): Promise<WorkloadResult> {
  const ids = makeIds('hit-', ROWS)
  const picks = uniformSequence(MASK + 1, ROWS, 11)
  const budgetMs = Math.max(25, 500 * ctx.cfg.scale)

  async function measure(contender: Contender) {
    let loads = 0
    const cache = contender.create({ ttl: 600_000, capacity: ROWS, loader: () => (loads++, ROW) })
    await runConcurrent(ROWS, 64, (i) => cache.fetch(ids[i]!))
    let j = 0
    const warmUntil = performance.now() + budgetMs / 4
    while (performance.now() < warmUntil) for (let k = 0; k < BATCH; k++) await cache.fetch(ids[picks[j++ & MASK]!]!)
    loads = 0
    let ops = 0
    const start = performance.now()
    let elapsed = 0
    do {
      for (let k = 0; k < BATCH; k++) await cache.fetch(ids[picks[j++ & MASK]!]!)
      ops += BATCH
      elapsed = performance.now() - start
    } while (elapsed < budgetMs)
    await cache.close()
    return { nsPerOp: (elapsed * 1e6) / ops, loads }
  }

  const runs = await interleave('W1 hit', ctx.contenders, ctx.cfg.reps, measure)
  const floor = floorNamed(ctx, 'floor:map')
  const floorNs = floorMedian(floor, runs, (r) => r.nsPerOp)
  const metrics = new Map<string, Record<string, number>>()
  const rows: string[][] = []
  for (const contender of ctx.contenders) {
    const list = runs.get(contender.name)!
    const ns = list.map((r) => r.nsPerOp)
    const nsPerOp = median(ns)
    metrics.set(contender.name, { nsPerOp })
    rows.push([contender.name, sig(nsPerOp), pm(spreadPct(ns)), num(1e9 / nsPerOp), ratio(nsPerOp, floorNs), num(Math.max(...list.map((r) => r.loads)))])
  }
  return {
    metrics,
    section: {
      id: 'W1',
      title: 'hit',
      method: `${num(ROWS)} rows pre-filled (ttl 10 min), then \`await fetch(id)\` one at a time on uniformly random existing ids for ${num(budgetMs)} ms per repetition (after ${num(budgetMs / 4)} ms untimed); median over ${ctx.cfg.reps} interleaved repetitions. Lower is better; × floor is against the raw-Map floor.`,
      tables: [{ headers: ['contender', 'ns/op', 'spread', 'reads/s', '× floor:map', 'loader calls in timed reads'], rows }],
      notes: [],
    },
  }
}
