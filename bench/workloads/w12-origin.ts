import { performance } from 'node:perf_hooks'
import type { StockRow } from '../contenders/day/types.js'
import { seededRandom } from '../lib/random.js'
import { exists, KEYS, keyId, type DayPlan } from './w12-trace.js'

/** Calls the origin serves at once; the rest queue, first come first served. */
export const ORIGIN_LIMIT = 16
/** Service time: log-normal, median 5 ms, σ 0.6 (p99 ≈ 20 ms), capped at 200 ms. */
export const LATENCY_MEDIAN_MS = 5
const LATENCY_SIGMA = 0.6
const LATENCY_CAP_MS = 200
/** Width of the bins of the origin-calls-over-time plot. */
export const BIN_MS = 100

/** What one day did to the origin. */
export interface OriginFigures {
  calls: number
  /** Most calls arrived and not yet answered at one moment (queued ones included). */
  peakConcurrent: number
  /** Calls that arrived while the origin was down. */
  outageCalls: number
  /** Calls answered with an error (all of them during the outage). */
  failedCalls: number
  /** Calls per BIN_MS from t0. */
  perBin: number[]
  /** Longest a call waited for a slot, ms. */
  queueMaxMs: number
  /** Every successful answer: its key, when it was answered and the version and read instant it carried (ms after t0), in answer order. */
  answers: { key: number[]; at: number[]; version: number[]; loadedAt: number[] }
}

/**
 * The day's origin, living in the parent so every instance of every shape shares one: a version per
 * row (1 at the start, +1 per update), a service time drawn per call, at most ORIGIN_LIMIT calls in
 * service (others queue), and an outage during which every call fails after its service time. A
 * call reads the row's version when its service starts, so an update landing while it is in
 * service is not in its answer (the race a cache must fence).
 */
export class Origin {
  // Written by update() only.
  private readonly versions = new Int32Array(KEYS).fill(1)
  // Written by read() and its completion only.
  private inService = 0
  private open = 0
  private readonly queue: (() => void)[] = []
  private readonly random: () => number
  readonly figures: OriginFigures

  constructor(
    private readonly plan: DayPlan,
    private readonly t0: number,
  ) {
    this.random = seededRandom(plan.seed + 1)
    this.figures = {
      calls: 0,
      peakConcurrent: 0,
      outageCalls: 0,
      failedCalls: 0,
      perBin: new Array<number>(Math.ceil(plan.dayMs / BIN_MS) + 50).fill(0),
      queueMaxMs: 0,
      answers: { key: [], at: [], version: [], loadedAt: [] },
    }
  }

  private elapsed(): number {
    return performance.timeOrigin + performance.now() - this.t0
  }

  private down(at: number): boolean {
    return at >= this.plan.outage.from && at < this.plan.outage.to
  }

  private serviceMs(): number {
    const u1 = 1 - this.random()
    const u2 = this.random()
    const normal = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2)
    return Math.min(LATENCY_CAP_MS, LATENCY_MEDIAN_MS * Math.exp(LATENCY_SIGMA * normal))
  }

  /** One call: queues for a slot, reads the row's version when served, answers after the service time (an error while the origin is down). */
  async read(key: number): Promise<StockRow> {
    const arrived = this.elapsed()
    const f = this.figures
    f.calls++
    const bin = Math.max(0, Math.floor(arrived / BIN_MS))
    if (bin < f.perBin.length) f.perBin[bin]!++
    if (this.down(arrived)) f.outageCalls++
    f.peakConcurrent = Math.max(f.peakConcurrent, ++this.open)
    // A slot is taken here, or handed over by the call that frees it (so the limit is never passed).
    if (this.inService >= ORIGIN_LIMIT) await new Promise<void>((resolve) => this.queue.push(resolve))
    else this.inService++
    const served = this.elapsed()
    f.queueMaxMs = Math.max(f.queueMaxMs, served - arrived)
    const row: StockRow = exists(key) ? { id: keyId(key), version: this.versions[key]!, loadedAt: this.t0 + served } : { id: keyId(key), version: 0, loadedAt: this.t0 + served, missing: true }
    const failing = this.down(served)
    await new Promise((resolve) => setTimeout(resolve, this.serviceMs()))
    this.open--
    const next = this.queue.shift()
    if (next !== undefined) next()
    else this.inService--
    if (failing || this.down(this.elapsed())) {
      f.failedCalls++
      throw new Error('origin unavailable (503)')
    }
    f.answers.key.push(key)
    f.answers.at.push(this.elapsed())
    f.answers.version.push(row.version)
    f.answers.loadedAt.push(served)
    return row
  }

  /** A stock update: the row's next version, effective at once. */
  update(key: number): number {
    return ++this.versions[key]!
  }
}
