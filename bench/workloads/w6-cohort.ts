import { performance } from 'node:perf_hooks'
import type { Contender } from '../contenders/types.js'
import { num, ratio, sig } from '../lib/format.js'
import { interleave } from '../lib/interleave.js'
import { makeIds, seededRandom } from '../lib/random.js'
import { RESOLVED } from '../lib/row.js'
import { sleep } from '../lib/sleep.js'
import { median, peakInWindow, percentile } from '../lib/stats.js'
import type { BenchContext, WorkloadResult } from './context.js'

const COHORT = 400
const TTL = 200
const JITTER = 0.2
const WINDOW = 10

/** One line of W6: a contender, with the jitter it is given (EchoStore runs with 0.2 and with 0). */
export interface CohortSeries {
  name: string
  contender: Contender
  jitter?: number
}

/** One W6 run of a series: every loader call's instant (ms after the cohort was filled; 0 for the fill itself) and id. */
export interface CohortRun {
  calls: { t: number; id: string }[]
  observeMs: number
  /** Mean ms one pass of reads over the cohort took: how finely refills could be observed. */
  passMs: number
}

/** The refill instants of a run: loader calls after the initial fill. */
export function refills(run: CohortRun): number[] {
  return run.calls.filter((c) => c.t > 0).map((c) => c.t)
}

/** What W6 hands the SVG writer besides its section. */
export interface W6Result extends WorkloadResult {
  /** Per series, the run whose peak is the median one. */
  picked: Map<string, CohortRun>
  series: CohortSeries[]
}

/**
 * W6 expiry cohort: 400 rows filled at once (ttl 200 ms; EchoStore with jitter 0.2, and again with
 * 0), then every id read every ~1 ms. Every loader call is time-stamped. Figures: spread of the
 * first refill instants (max − min, and p5–p95), and the peak refills in any 10 ms window against
 * what a uniform spread over ±trunc(ttl·jitter) would put there.
 */
export async function runW6(ctx: BenchContext): Promise<W6Result> {
  const ids = makeIds('cohort-', COHORT)
  const series: CohortSeries[] = ctx.contenders.flatMap((contender): CohortSeries[] =>
    contender.kind === 'subject'
      ? [
          { name: `${contender.name} (jitter ${JITTER})`, contender, jitter: JITTER },
          { name: `${contender.name} (jitter 0)`, contender, jitter: 0 },
        ]
      : [{ name: contender.name, contender }],
  )

  async function measure(s: CohortSeries, rep: number): Promise<CohortRun> {
    const resolution = s.contender.ttlResolutionMs ?? 1
    const effectiveTtl = Math.ceil(TTL / resolution) * resolution
    const observeMs = effectiveTtl * (1 + (s.jitter ?? 0)) + resolution + 50
    const calls: { t: number; id: string }[] = []
    let filledAt = Number.POSITIVE_INFINITY
    const cache = s.contender.create({
      ttl: TTL,
      capacity: COHORT * 4,
      loader: (id) => {
        calls.push({ t: performance.now() - filledAt, id })
        return RESOLVED
      },
      ...(s.jitter !== undefined ? { jitter: s.jitter, random: seededRandom(1000 + rep) } : {}),
    })
    await Promise.all(ids.map((id) => cache.fetch(id)))
    filledAt = performance.now()
    for (const c of calls) c.t = 0
    let passes = 0
    let readingMs = 0
    while (performance.now() - filledAt < observeMs) {
      const passStart = performance.now()
      await Promise.all(ids.map((id) => cache.fetch(id)))
      readingMs += performance.now() - passStart
      passes++
      await sleep(1)
    }
    await cache.close()
    return { calls, observeMs, passMs: readingMs / passes }
  }

  const runs = await interleave('W6 cohort', series, ctx.cfg.reps, measure)
  const metrics = new Map<string, Record<string, number>>()
  const picked = new Map<string, CohortRun>()
  const rows: string[][] = []
  for (const s of series) {
    const list = runs.get(s.name)!
    const stats = list.map((run) => {
      const first = new Map<string, number>()
      for (const c of run.calls) if (c.t > 0 && !first.has(c.id)) first.set(c.id, c.t)
      const instants = [...first.values()]
      return {
        run,
        peak: peakInWindow(refills(run), WINDOW),
        refilled: first.size,
        spread: instants.length > 0 ? Math.max(...instants) - Math.min(...instants) : Number.NaN,
        mid90: instants.length > 0 ? percentile(instants, 95) - percentile(instants, 5) : Number.NaN,
        firstAt: instants.length > 0 ? Math.min(...instants) : Number.NaN,
      }
    })
    const peak = median(stats.map((x) => x.peak))
    picked.set(s.name, [...stats].sort((a, b) => a.peak - b.peak)[stats.length >> 1]!.run)
    const jitterMs = Math.trunc(TTL * (s.jitter ?? 0))
    const uniform = jitterMs > 0 ? (COHORT * WINDOW) / (2 * jitterMs) : COHORT
    const refilled = median(stats.map((x) => x.refilled))
    metrics.set(s.name, { peak, uniform, refilled, spread: median(stats.map((x) => x.spread)) })
    rows.push([
      s.name,
      s.jitter !== undefined ? String(s.jitter) : 'none',
      num(refilled),
      sig(median(stats.map((x) => x.firstAt))),
      sig(median(stats.map((x) => x.spread))),
      sig(median(stats.map((x) => x.mid90))),
      num(peak),
      num(uniform),
      ratio(peak, uniform),
      sig(median(list.map((r) => r.passMs))),
    ])
  }
  return {
    metrics,
    picked,
    series,
    section: {
      id: 'W6',
      title: 'expiry cohort',
      method: `${COHORT} rows filled at once (ttl ${TTL} ms), then all ${COHORT} ids read every ~1 ms; every loader call is time-stamped (ms after the fill completed). Spread is over each id's first refill. Peak is the most refills in any ${WINDOW} ms window (sliding); "uniform" is what a uniform spread over ±trunc(ttl·jitter) puts in ${WINDOW} ms (for no jitter: the whole cohort). Median over ${ctx.cfg.reps} interleaved repetitions.`,
      tables: [
        { headers: ['series', 'jitter', 'ids refilled', 'first refill ms', 'spread ms (max−min)', 'spread ms (p5–p95)', `peak / ${WINDOW} ms`, 'uniform', 'peak × uniform', 'read pass ms'], rows },
      ],
      notes: [
        ...(series.some((s) => (s.contender.ttlResolutionMs ?? 1) > TTL)
          ? [
              'async-cache-dedupe takes ttl in whole seconds and its clock counts whole seconds: a ttl of 200 ms becomes 1 s, its rows expire together at the next second boundary, and it is observed for ~2 s (so a row can refill twice).',
            ]
          : []),
        'A series whose read pass (400 reads) takes several ms sees its expired rows only as each pass reaches them, so its refills can straddle two 10 ms windows without any jitter.',
      ],
    },
  }
}
