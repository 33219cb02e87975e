import { performance } from 'node:perf_hooks'
import type { Contender } from '../contenders/types.js'
import { num, percent, ratio, type Table } from '../lib/format.js'
import { interleave } from '../lib/interleave.js'
import { makeIds } from '../lib/random.js'
import { RESOLVED } from '../lib/row.js'
import { withSeededMathRandom } from '../lib/seeded-math-random.js'
import type { BenchContext, Metrics, WorkloadResult } from './context.js'
import { loopTrace } from './w9-loop-trace.js'
import { scanTrace } from './w9-scan-trace.js'
import { shiftingZipfTrace } from './w9-shifting-trace.js'
import { traceShape, type Trace, type TraceShape } from './w9-trace.js'
import { stationaryZipfTrace } from './w9-zipf-trace.js'

/** Long enough that no row expires during a trace: W9 measures eviction alone. */
const TTL = 60 * 60 * 1_000

/** The W9 traces in report order, each with its own seed. */
const TRACES: readonly { make: (shape: TraceShape, seed: number) => Trace; seed: number }[] = [
  { make: stationaryZipfTrace, seed: 91 },
  { make: shiftingZipfTrace, seed: 92 },
  { make: scanTrace, seed: 93 },
  { make: loopTrace, seed: 94 },
]

/** The peers W9's "× best peer" column and its targets compare against, with their eviction policies. */
export const HIT_RATE_PEERS: Readonly<Record<string, string>> = { 'lru-cache': 'LRU', transitory: 'W-TinyLFU', 'sieve-cache': 'SIEVE' }

/** One trace's hit rates, by contender, in contender order: what the W9 plot draws. */
export interface TraceHitRates {
  name: string
  title: string
  hitRates: { contender: string; hitRate: number }[]
}

/** What W9 hands the plot besides its section. */
export interface W9Result extends WorkloadResult {
  traces: TraceHitRates[]
  shape: TraceShape
}

/** The key of one of a trace's figures in W9's metrics, e.g. `hitRate:zipf`. */
export function traceMetric(trace: string, figure: 'hitRate' | 'loads'): string {
  return `${figure}:${trace}`
}

/**
 * W9 hit rate: four deterministic traces of 1M requests over 1M ids (BENCH_SCALE scales both),
 * each read through every contender with capacity 1 % of the ids and a ttl no row outlives, one
 * `await fetch(id)` at a time, with a loader that counts its calls. Figures per trace and
 * contender: hit rate (1 − loads / requests), loads, and ops/s of that one pass.
 */
export async function runW9(ctx: BenchContext): Promise<W9Result> {
  const shape = traceShape(ctx.cfg.scale)
  const ids = makeIds('id-', shape.keySpace)
  const metrics: Metrics = new Map(ctx.contenders.map((c) => [c.name, {}]))
  const tables: Table[] = []
  const recipes: string[] = []
  const traces: TraceHitRates[] = []

  for (const { make, seed } of TRACES) {
    const trace = make(shape, seed)
    recipes.push(`${trace.name} (seed ${seed}): ${trace.recipe}`)

    async function measure(contender: Contender) {
      return withSeededMathRandom(seed, async () => {
        let loads = 0
        const cache = contender.create({ ttl: TTL, capacity: shape.capacity, loader: () => (loads++, RESOLVED) })
        const start = performance.now()
        for (let i = 0; i < trace.ids.length; i++) await cache.fetch(ids[trace.ids[i]!]!)
        const ms = performance.now() - start
        await cache.close()
        return { loads, opsPerSec: (trace.ids.length * 1000) / ms }
      })
    }

    const runs = await interleave(`W9 ${trace.name}`, ctx.contenders, 1, measure)
    const hitRates = ctx.contenders.map((c) => ({ contender: c.name, hitRate: 1 - runs.get(c.name)![0]!.loads / shape.requests }))
    const best = Math.max(...hitRates.filter((h) => h.contender in HIT_RATE_PEERS).map((h) => h.hitRate))
    const rows = hitRates.map(({ contender, hitRate }) => {
      const { loads, opsPerSec } = runs.get(contender)![0]!
      Object.assign(metrics.get(contender)!, { [traceMetric(trace.name, 'hitRate')]: hitRate, [traceMetric(trace.name, 'loads')]: loads })
      return [contender, percent(hitRate), num(loads), ratio(hitRate, best), num(opsPerSec)]
    })
    tables.push({ caption: `**${trace.name}**: ${trace.title}`, headers: ['contender', 'hit rate', 'loads', '× best peer', 'ops/s (one pass)'], rows })
    traces.push({ name: trace.name, title: trace.title, hitRates })
  }

  return {
    metrics,
    traces,
    shape,
    section: {
      id: 'W9',
      title: 'hit rate',
      method:
        `Four traces of ${num(shape.requests)} requests over ${num(shape.keySpace)} ids (BENCH_SCALE scales both), made by seeded generators, so every contender and every run reads the same ids in the same order: ${recipes.join('; ')}. ` +
        `Every contender gets capacity ${num(shape.capacity)} (1 % of the ids), a ttl of 1 h (longer than any pass: no row expires), and a loader that counts its calls; requests go one at a time (\`await cache.fetch(id)\`), since with several in flight, which requests join a pending load would depend on each contender's speed. ` +
        `With one request at a time and a loader that answers at once, each contender's loads are a function of the trace alone (\`Math.random\` is seeded during each pass, for transitory's admission coin), so each trace runs once per contender. Hit rate = 1 − loads / requests; × best peer is against the best hit rate of ${Object.entries(
          HIT_RATE_PEERS,
        )
          .map(([p, policy]) => `${p} (${policy})`)
          .join(', ')}; ops/s is of that one pass, indicative only. ` +
        `bentocache, cache-manager and async-cache-dedupe sit W9 out: their memory stores evict LRU (lru-cache's, cacheable's and mnemonist's), and in a full-size trial each gave exactly lru-cache's loads on all four traces, bentocache and cache-manager at 13–40 s a trace. The floors sit out too: W9 weighs eviction policies, and theirs is FIFO.`,
      tables,
      notes: [
        "transitory evicts in batches, holding up to 1 % over its maxSize between them; its adapter calls transitory's own cleanUp() whenever a fetch leaves it over capacity, so it never holds more rows than the others (in a full-size trial, its batched eviction alone gave 63.0 %, 55.2 %, 48.1 % and 48.9 % on the four traces: the trimming does not handicap it).",
      ],
    },
  }
}
