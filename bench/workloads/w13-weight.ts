import { performance } from 'node:perf_hooks'
import { LRUCache } from 'lru-cache'
import { createTable } from '../../src/index.js'
import { num, percent, ratio, type Table } from '../lib/format.js'
import { makeIds, seededRandom } from '../lib/random.js'
import { withSeededMathRandom } from '../lib/seeded-math-random.js'
import type { BenchContext, Metrics, WorkloadResult } from './context.js'
import { shiftingZipfTrace } from './w9-shifting-trace.js'
import { traceShape, type Trace, type TraceShape } from './w9-trace.js'
import { stationaryZipfTrace } from './w9-zipf-trace.js'

/** Long enough that no row expires during a trace: W13 measures eviction by weight alone. */
const TTL = 60 * 60 * 1_000
/** The lightest and heaviest value, in bytes: four orders of magnitude apart. */
const LIGHTEST = 100
const HEAVIEST = 1_000_000
/** The seed of the values' sizes. */
const SIZE_SEED = 131
/** Requests between two checks of the weight held. */
const CHECK_EVERY = 1_000

/** The traces W13 reads, each with its own seed (W9's zipf and shifting zipf). */
const TRACES: readonly { make: (shape: TraceShape, seed: number) => Trace; seed: number }[] = [
  { make: stationaryZipfTrace, seed: 91 },
  { make: shiftingZipfTrace, seed: 92 },
]

/** A cache bounded by weight, as W13 drives it. */
interface Weighed {
  fetch(id: string): Promise<unknown>
  /** The weight it holds now. */
  weight(): number
  close(): Promise<void>
}

/** The contenders: EchoStore with `maxSize` + `sizeOf` (capacity left at its default, far above the rows held), lru-cache with `maxSize` + `sizeCalculation`. */
const CONTENDERS: readonly { name: string; setup: string; create(maxSize: number, sizeOf: (id: string) => number, load: (id: string) => number): Weighed }[] = [
  {
    name: 'echostore',
    setup: 'createTable({ ttl, maxSize, sizeOf })',
    create(maxSize, sizeOf, load) {
      const table = createTable<number>({ name: 'bench', ttl: TTL, maxSize, sizeOf: (_value, id) => sizeOf(id as string) })
      return { fetch: (id) => table.fetch(id, load), weight: () => table.stats().weight, close: () => table.close() }
    },
  },
  {
    name: 'lru-cache',
    setup: 'new LRUCache({ ttl, maxSize, sizeCalculation, fetchMethod })',
    create(maxSize, sizeOf, load) {
      const cache = new LRUCache<string, number>({ ttl: TTL, maxSize, sizeCalculation: (_value, id) => sizeOf(id), fetchMethod: (id) => load(id) })
      return {
        fetch: (id) => cache.fetch(id),
        weight: () => cache.calculatedSize,
        async close() {
          cache.clear()
        },
      }
    },
  },
]

/**
 * W13 memory bounded in bytes: W9's zipf and shifting-zipf traces, each id given a size drawn
 * log-uniformly from 100 B to 1 MB (seeded, independent of its popularity), read through EchoStore
 * (`maxSize` + `sizeOf`) and lru-cache (`maxSize` + `sizeCalculation`) with the same `maxSize`: the
 * mean size times 1 % of the ids. Figures per trace and contender: hit rate, the most weight seen
 * held (checked every 1,000 requests and at the end), and ops/s of that one pass.
 */
export async function runW13(ctx: BenchContext): Promise<WorkloadResult> {
  const shape = traceShape(ctx.cfg.scale)
  const ids = makeIds('id-', shape.keySpace)
  const rnd = seededRandom(SIZE_SEED)
  const sizes = new Float64Array(shape.keySpace)
  for (let i = 0; i < sizes.length; i++) sizes[i] = Math.round(LIGHTEST * (HEAVIEST / LIGHTEST) ** rnd())
  const mean = sizes.reduce((sum, size) => sum + size, 0) / sizes.length
  const maxSize = Math.round(mean * shape.capacity)
  const sizeByName = new Map(ids.map((id, i) => [id, sizes[i]!]))
  const sizeOf = (id: string) => sizeByName.get(id)!
  const metrics: Metrics = new Map(CONTENDERS.map((c) => [c.name, {}]))
  const tables: Table[] = []
  const recipes: string[] = []

  for (const { make, seed } of TRACES) {
    const trace = make(shape, seed)
    recipes.push(`${trace.name} (seed ${seed})`)
    const rows: { name: string; hitRate: number; loads: number; heaviest: number; opsPerSec: number }[] = []
    for (const contender of CONTENDERS) {
      const measured = await withSeededMathRandom(seed, async () => {
        let loads = 0
        const cache = contender.create(maxSize, sizeOf, (id) => (loads++, sizeOf(id)))
        let heaviest = 0
        const start = performance.now()
        for (let i = 0; i < trace.ids.length; i++) {
          await cache.fetch(ids[trace.ids[i]!]!)
          if (i % CHECK_EVERY === 0) heaviest = Math.max(heaviest, cache.weight())
        }
        const ms = performance.now() - start
        heaviest = Math.max(heaviest, cache.weight())
        await cache.close()
        return { loads, heaviest, opsPerSec: (trace.ids.length * 1000) / ms }
      })
      rows.push({ name: contender.name, hitRate: 1 - measured.loads / shape.requests, ...measured })
    }
    const lru = rows.find((r) => r.name === 'lru-cache')!.hitRate
    for (const r of rows) Object.assign(metrics.get(r.name)!, { [`hitRate:${trace.name}`]: r.hitRate, [`heaviest:${trace.name}`]: r.heaviest, maxSize })
    tables.push({
      caption: `**${trace.name}**: ${trace.title}`,
      headers: ['contender', 'hit rate', 'loads', '× lru-cache', 'most weight held', 'ops/s (one pass)'],
      rows: rows.map((r) => [r.name, percent(r.hitRate), num(r.loads), ratio(r.hitRate, lru), `${num(r.heaviest)} (${percent(r.heaviest / maxSize)} of maxSize)`, num(r.opsPerSec)]),
    })
  }

  return {
    metrics,
    section: {
      id: 'W13',
      title: 'memory bounded in bytes',
      method:
        `W9's traces ${recipes.join(' and ')}: ${num(shape.requests)} requests over ${num(shape.keySpace)} ids (BENCH_SCALE scales both). Each id's value weighs a size drawn log-uniformly from ${num(LIGHTEST)} B to ${num(HEAVIEST)} B (seed ${SIZE_SEED}, independent of popularity; mean ${num(Math.round(mean))} B). ` +
        `Both contenders get maxSize ${num(maxSize)} (the mean size × 1 % of the ids) and a size function that answers the id's size: ${CONTENDERS.map((c) => `${c.name}: \`${c.setup}\``).join('; ')} (EchoStore's capacity stays at its default, 100,000 rows, far above the rows that fit). ` +
        'Requests go one at a time, each trace once per contender (its loads are a function of the trace). The most weight held is the largest of the weight the cache reports (`stats().weight`, `calculatedSize`) every 1,000 requests and at the end.',
      tables,
      notes: [],
    },
  }
}
