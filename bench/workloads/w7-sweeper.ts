import { monitorEventLoopDelay, performance } from 'node:perf_hooks'
import type { BenchClock, CacheInstance, Contender } from '../contenders/types.js'
import { scaled } from '../lib/config.js'
import { collect } from '../lib/gc.js'
import { num, ratio, sig } from '../lib/format.js'
import { interleave } from '../lib/interleave.js'
import { runConcurrent } from '../lib/pool.js'
import { makeIds, seededRandom } from '../lib/random.js'
import { RESOLVED, ROW } from '../lib/row.js'
import { sleep } from '../lib/sleep.js'
import { median } from '../lib/stats.js'
import { SWEEP_SLICE } from '../../src/owner/sweep-timer.js'
import { floorMedian, floorNamed, type BenchContext, type WorkloadResult } from './context.js'

/** EchoStore's rows get ttl 60 s ± 500 ms on a frozen clock, so all expire within one second. */
const SWEEP_TTL = 60_000
const HALF_WINDOW = 500
const SWEEP_JITTER = (HALF_WINDOW + 0.4) / SWEEP_TTL
const CALIBRATE_MS = 300
/** How long the sweeper gets: the 1 s expiry span, two default (1 s) sweeper ticks, and slack. */
const WATCH_MS = 6_000

interface Reclaim {
  stallMaxMs: number
  stallP99Ms: number
  reclaimed: number
  rowsPerSec: number
  /** Sweeper: ms from the first expiry until every row was reclaimed (NaN if it never was). */
  doneMs: number
}

/** A real clock that can stand still, then resume from any instant (time only moves forward). */
function freezableClock() {
  const frozenAt = Date.now()
  let frozen = true
  let skew = 0
  const clock: BenchClock = {
    now: () => (frozen ? frozenAt : Date.now() + skew),
    setTimeout(fn, ms) {
      const handle = setTimeout(fn, ms)
      handle.unref()
      return handle
    },
    clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
  }
  return {
    clock,
    /** The instant `now()` reads while frozen. */
    frozenAt,
    /** Unfreezes so that `now()` reads `at` this instant and moves with real time after. */
    resumeAt(at: number) {
      skew = at - Date.now()
      frozen = false
    },
  }
}

/** Polls every 5 ms until `done()` or `ms` have passed, with the event-loop-delay histogram and ELU running. */
async function watch(done: () => boolean, ms: number) {
  const histogram = monitorEventLoopDelay({ resolution: 1 })
  const elu0 = performance.eventLoopUtilization()
  const start = performance.now()
  histogram.enable()
  let doneAt = Number.NaN
  while (performance.now() - start < ms) {
    if (done()) {
      doneAt = performance.now() - start
      break
    }
    await sleep(5)
  }
  histogram.disable()
  const elu = performance.eventLoopUtilization(elu0)
  return { histogram, activeMs: elu.active, wallMs: performance.now() - start, doneAt }
}

/**
 * Sweeper measurement: fill on a frozen clock (ttl 60 s ± 500 ms, so expiries lie in one 1 s
 * span), resume the clock at the earliest expiry, so every row expires within the next second,
 * and watch the sweeper reclaim them. Rows/s = rows reclaimed / event-loop active time spent on it
 * (the watcher's own active time, calibrated before the table exists, is subtracted).
 */
async function measureSweeper(contender: Contender, rows: number, ids: string[], rep: number): Promise<Reclaim> {
  const idle = await watch(() => false, CALIBRATE_MS)
  const idleActivePerMs = idle.activeMs / idle.wallMs
  const frozen = freezableClock()
  const cache: CacheInstance = contender.create({ ttl: SWEEP_TTL, jitter: SWEEP_JITTER, capacity: rows, loader: () => RESOLVED, clock: frozen.clock, random: seededRandom(7 + rep) })
  await runConcurrent(rows, 64, (i) => cache.fetch(ids[i]!))
  const before = cache.swept!()
  collect()
  frozen.resumeAt(frozen.frozenAt + SWEEP_TTL - HALF_WINDOW)
  const run = await watch(() => cache.swept!() - before >= rows, WATCH_MS)
  const reclaimed = cache.swept!() - before
  await cache.close()
  const sweepActive = Math.max(0.001, run.activeMs - idleActivePerMs * run.wallMs)
  return {
    stallMaxMs: run.histogram.max / 1e6,
    stallP99Ms: run.histogram.percentile(99) / 1e6,
    reclaimed,
    rowsPerSec: (reclaimed * 1000) / sweepActive,
    doneMs: run.doneAt,
  }
}

/** The name of the in-workload floor: a bare `Map` of the same ids, deleted in the sweeper's slices. */
export const SLICED_FLOOR = 'floor:map-slices'

/**
 * The sliced floor: a bare `Map` of the same ids, every one deleted in slices of `SWEEP_SLICE`
 * (EchoStore's slice), each slice a 0 ms timer as the sweeper's are; watched like the sweeper. Its
 * longest stall is what one `Map` pays when V8 shrinks its hash table in one step.
 */
async function measureSlicedFloor(rows: number, ids: string[]): Promise<Reclaim> {
  const idle = await watch(() => false, CALIBRATE_MS)
  const idleActivePerMs = idle.activeMs / idle.wallMs
  const map = new Map<string, object>()
  for (const id of ids) map.set(id, ROW)
  collect()
  let next = 0
  const slice = (): void => {
    const end = Math.min(rows, next + SWEEP_SLICE)
    for (; next < end; next++) map.delete(ids[next]!)
    if (next < rows) setTimeout(slice, 0)
  }
  setTimeout(slice, 0)
  const run = await watch(() => next >= rows, WATCH_MS)
  const sweepActive = Math.max(0.001, run.activeMs - idleActivePerMs * run.wallMs)
  return { stallMaxMs: run.histogram.max / 1e6, stallP99Ms: run.histogram.percentile(99) / 1e6, reclaimed: next, rowsPerSec: (next * 1000) / sweepActive, doneMs: run.doneAt }
}

/**
 * Purge measurement, for contenders without a sweeper: fill with ttl 1 s, wait until every row
 * has expired, then time the contender's purge method once. It is one synchronous call, so the
 * stall is its duration.
 */
async function measurePurge(contender: Contender, rows: number, ids: string[]): Promise<Reclaim> {
  const cache = contender.create({ ttl: 1_000, capacity: rows, loader: () => RESOLVED })
  if (cache.prefill !== undefined) await cache.prefill(ids, ROW)
  else await runConcurrent(rows, 64, (i) => cache.fetch(ids[i]!))
  await sleep(1_050)
  const held = cache.size?.() ?? rows
  collect()
  const start = performance.now()
  cache.purge!()
  const ms = performance.now() - start
  const reclaimed = held - (cache.size?.() ?? 0)
  await cache.close()
  return { stallMaxMs: ms, stallP99Ms: Number.NaN, reclaimed, rowsPerSec: (reclaimed * 1000) / ms, doneMs: ms }
}

/**
 * W7 sweeper: 1M rows expiring within one second. With a sweeper (EchoStore): the longest
 * event-loop stall (monitorEventLoopDelay max and p99, 1 ms resolution) while they are reclaimed,
 * and rows reclaimed per second of event-loop time. Without one: the contender's purge method,
 * timed once, where it has one; n/a otherwise.
 */
export async function runW7(ctx: BenchContext): Promise<WorkloadResult> {
  const rows = scaled(ctx.cfg, 1_000_000, 10_000)
  const ids = makeIds('sweep-', rows)
  const able = ctx.contenders.filter((c) => c.sweeper !== undefined || c.purgeMethod !== undefined)
  const reps = ctx.cfg.heavyReps
  const sliced = { name: SLICED_FLOOR, sweeper: `a bare Map, deleted in slices of ${num(SWEEP_SLICE)} ids through 0 ms timers`, purgeMethod: undefined }
  const runs = await interleave('W7 sweeper', [...able, sliced], reps, (c, rep) =>
    c === sliced ? measureSlicedFloor(rows, ids) : (c as Contender).sweeper !== undefined ? measureSweeper(c as Contender, rows, ids, rep) : measurePurge(c as Contender, rows, ids),
  )
  const floor = floorNamed(ctx, 'floor:map')
  const floorRate = floorMedian(floor, runs, (r) => r.rowsPerSec)
  const metrics = new Map<string, Record<string, number>>()
  const tableRows: string[][] = []
  for (const contender of [sliced, ...ctx.contenders]) {
    const list = runs.get(contender.name)
    if (list === undefined) {
      tableRows.push([contender.name, 'none (no sweeper, no purge method)', 'n/a', 'n/a', 'n/a', 'n/a', 'n/a', 'n/a'])
      continue
    }
    const stallMaxMs = median(list.map((r) => r.stallMaxMs))
    const stallP99Ms = median(list.map((r) => r.stallP99Ms))
    const rowsPerSec = median(list.map((r) => r.rowsPerSec))
    const reclaimed = Math.min(...list.map((r) => r.reclaimed))
    metrics.set(contender.name, { stallMaxMs, stallP99Ms, rowsPerSec, reclaimed })
    tableRows.push([
      contender.name,
      contender.sweeper ?? `${contender.purgeMethod}, timed once`,
      sig(stallMaxMs),
      Number.isNaN(stallP99Ms) ? 'n/a (one call)' : sig(stallP99Ms),
      `${num(reclaimed)} / ${num(rows)}`,
      num(rowsPerSec),
      ratio(rowsPerSec, floorRate),
      list.every((r) => Number.isFinite(r.doneMs)) ? sig(median(list.map((r) => r.doneMs))) : 'not all reclaimed',
    ])
  }
  return {
    metrics,
    section: {
      id: 'W7',
      title: 'sweeper',
      method: `${num(rows)} rows expiring within one second. ${SLICED_FLOOR}: a bare \`Map\` of the same ids, deleted in EchoStore's slices of ${num(SWEEP_SLICE)} through 0 ms timers, watched the same way (the stall one \`Map\` pays when V8 shrinks it in one step). EchoStore: filled on a frozen clock with ttl 60 s ± 500 ms (jitter ${SWEEP_JITTER.toFixed(5)}), the clock then resumed at the earliest expiry; stalls are \`monitorEventLoopDelay\` (resolution 1 ms) max and p99 from then until every row was swept; rows/s = rows swept / event-loop active time (ELU, less the watcher's own idle cost). Peers have no sweeper: their purge method (if any) is timed once after every row expired (ttl 1 s), and its duration is the stall. Median over ${reps} interleaved repetitions; × floor is rows/s against the Map floor's one-pass purge.`,
      tables: [{ headers: ['contender', 'reclaimed by', 'max stall ms', 'p99 stall ms', 'rows reclaimed (worst rep)', 'rows/s', '× floor:map', 'ms until all reclaimed'], rows: tableRows }],
      notes: [],
    },
  }
}
