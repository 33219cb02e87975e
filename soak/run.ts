/**
 * One soak run: builds the tables, runs the workload and the fault schedule side by side until the
 * budget is spent, drains to a quiescent point, reads the counters, closes everything, and checks.
 * Used by `npm run soak` (soak/main.ts) and, with a few seconds of budget, by spec/soak.spec.ts.
 */
import { BadInputs } from './bad-inputs.js'
import { type Check, type Figures, type HeapSamples, runChecks } from './checks.js'
import { Escapes } from './escapes.js'
import { FaultCounts, runFaults } from './faults.js'
import { PromiseLedger } from './ledger.js'
import { Origin } from './origin.js'
import { Problems } from './problems.js'
import { type ReportData, progressLine } from './report.js'
import { type ModelFigures, soakModel } from './model/soak.js'
import { Vitals } from './vitals.js'
import { WorkloadCounts, runWorkload } from './workload.js'
import { type Leftovers, SHAPE, type World, buildWorld } from './world.js'

/** How a run goes. */
export interface SoakOptions {
  /** Budget of the workload, in seconds. */
  seconds: number
  /** Seed of every PRNG stream. */
  seed: number
  /** The Redis for the third table, or why there is none. */
  redis: { url: string } | { skipped: string }
  /** Ms between progress lines. */
  progressEvery: number
  /** Where progress lines go. */
  progress(line: string): void
}

/** What a run found: the report's figures and its checks. */
export interface SoakResult extends ReportData {
  /** True when no check failed. */
  passed: boolean
}

/**
 * How long the drain waits with nothing settling before it calls the rest lost: every call the
 * workload makes is bounded by `loadTimeout` (100 ms) plus an L2 call's bound (50 ms), and no
 * deadline or cancel is further than 120 ms away, so a second of silence means stuck, not slow.
 */
const QUIET_MS = 1_000

/** Resolves after `ms` (at once when it is not positive). */
const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)))

/** Resolves once `done()` holds (checked every few ms), or after `ms`. */
async function until(done: () => boolean, ms: number): Promise<void> {
  const deadline = performance.now() + ms
  while (!done() && performance.now() < deadline) await delay(5)
}

/** What the working part of a run measured, before the world is closed. */
type Measured = Omit<Figures, 'escapes' | 'leftovers' | 'heap'> & Pick<ReportData, 'elapsed' | 'loop'> & { heapSamples: Partial<HeapSamples> }

/**
 * Runs the workload and the fault schedule until the budget is spent, with a progress line every
 * `progressEvery` ms and a heap sample at the start and half-way; then drains to a quiescent point
 * (every call settled, no flight running) and reads the counters there.
 */
async function work(world: World, problems: Problems, vitals: Vitals, options: SoakOptions): Promise<Measured> {
  const ledger = new PromiseLedger()
  const origin = new Origin()
  const counts = new WorkloadCounts()
  const faults = new FaultCounts()
  const badInputs = new BadInputs({ origin, ledger, problems })
  const heapSamples: Partial<HeapSamples> = { start: vitals.heapAfterGc() }
  vitals.startLoop()
  const budget = options.seconds * 1_000
  const start = performance.now()
  const deadline = start + budget
  const midpoint = setTimeout(() => (heapSamples.middle = vitals.heapAfterGc()), budget / 2)
  const progress = setInterval(() => {
    const elapsed = (performance.now() - start) / 1_000
    options.progress(progressLine({ elapsed, workload: counts, faults, badInputs, pending: ledger.open, heap: vitals.heapNow(), loop: vitals.loopDelay().at(-1)! }))
  }, options.progressEvery)
  // Fault phases: short enough that every fault comes round at least twice per store in a short run, at most 3 s.
  const phase = Math.min(3_000, Math.max(100, budget / 60))
  // Workers stop at the deadline and wait for their last call; one whose call was lost would wait
  // for ever, so the run goes on at the deadline, and the drain tells what never settled.
  const done = Promise.all([
    runWorkload({ tables: world.tables, origin, ledger, problems, badInputs, counts, seed: options.seed }, deadline),
    runFaults(world.tables, world.redis, phase, deadline, faults),
  ])
  try {
    await Promise.race([done, delay(deadline - performance.now())])
  } finally {
    clearInterval(progress)
    clearTimeout(midpoint)
  }
  const elapsed = (performance.now() - start) / 1_000
  await ledger.drained(QUIET_MS)
  const workersBack = await Promise.race([done.then(() => true), delay(QUIET_MS).then(() => false)])
  await until(() => world.tables.every(({ table }) => table.stats().inflight === 0), QUIET_MS)
  const tables = world.tables.map(({ label, table, tally, chaos }) => ({ label, stats: table.stats(), tally, capacity: SHAPE.capacity, hasL2: chaos !== undefined }))
  vitals.stop()
  heapSamples.end = vitals.heapAfterGc()
  return {
    elapsed,
    tables,
    problems,
    workload: counts,
    faults,
    badInputs,
    promises: { made: ledger.made(), pending: ledger.pending() },
    workersBack,
    stalled: world.tables.reduce((sum, { chaos }) => sum + (chaos?.stalled ?? 0), 0),
    heapSamples,
    loop: vitals.loopDelay(),
  }
}

/** The model part's check: every schedule kept every promise (a failure names the random seed and the path that replay it). */
function modelCheck(model: ModelFigures): Check {
  const name = 'scheduled model: every schedule kept every promise (answers no older than a known change, laws, settled promises, no timer after close)'
  if (model.failure === undefined) return { name, status: 'PASS', detail: `${model.schedules.toLocaleString('en-US')} schedules, ${model.operations.toLocaleString('en-US')} operations` }
  const { seed, path, problems } = model.failure
  return { name, status: 'FAIL', detail: `seed ${seed}, path "${path}": ${problems.slice(0, 3).join('; ')}` }
}

/** Runs the soak; never throws for what it finds (that is in `checks`), only when it cannot start (a Redis it needs does not answer). */
export async function runSoak(options: SoakOptions): Promise<SoakResult> {
  const problems = new Problems()
  const world = await buildWorld('url' in options.redis ? options.redis.url : undefined, problems)
  const escapes = new Escapes()
  const vitals = new Vitals()
  let leftovers: Leftovers | undefined
  try {
    const measured = await work(world, problems, vitals, options)
    leftovers = await world.close()
    // Then the scheduled model, for a sixth of the budget: loader answers, L2 calls and bus deliveries in orders fast-check picks.
    const model = await soakModel((options.seconds * 1_000) / 6, options.seed)
    await new Promise((resolve) => setImmediate(resolve)) // a rejection left unhandled surfaces by now
    const { start, middle, end } = measured.heapSamples
    const heap = start !== undefined && middle !== undefined && end !== undefined ? { start, middle, end } : undefined
    const checks: Check[] = [...runChecks({ ...measured, heap, escapes, leftovers }), modelCheck(model)]
    return {
      seconds: options.seconds,
      seed: options.seed,
      // buildWorld has a Redis side exactly when it was given a url.
      redis: world.redis === undefined ? (options.redis as { skipped: string }) : { url: world.redis.url, prefix: world.redis.prefix },
      elapsed: measured.elapsed,
      workload: measured.workload,
      faults: measured.faults,
      badInputs: measured.badInputs,
      heap: measured.heapSamples,
      loop: measured.loop,
      tables: measured.tables.map(({ label, stats }) => ({ label, stats })),
      model,
      checks,
      passed: checks.every((c) => c.status !== 'FAIL'),
    }
  } finally {
    vitals.stop()
    escapes.stop()
    if (leftovers === undefined) await world.close() // a fault of the soak itself: leave nothing open behind it
  }
}
