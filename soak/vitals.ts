import { type IntervalHistogram, monitorEventLoopDelay } from 'node:perf_hooks'
import { canCollect, collect } from '../bench/lib/gc.js'

/** Event-loop delay over one stretch of the run, in ms. */
export interface LoopDelay {
  /** 99th percentile. */
  p99: number
  /** The longest delay seen. */
  max: number
}

const toMs = (histogram: IntervalHistogram): LoopDelay => ({ p99: histogram.percentile(99) / 1e6, max: histogram.max / 1e6 })

/**
 * How the process held up: heap used after a forced full GC (only with `--expose-gc`), and the
 * event-loop delay measured by `monitorEventLoopDelay`. A GC forced while the loop is measured ends
 * one stretch of measurement and starts the next once it is over, so the soak's own pause lands in
 * neither (a histogram re-enabled after a pause would count the pause as its next sample).
 */
export class Vitals {
  readonly #stretches: IntervalHistogram[] = []
  #running = false

  /** Starts measuring the event loop. */
  startLoop(): void {
    const histogram = monitorEventLoopDelay({ resolution: 10 })
    histogram.enable()
    this.#stretches.push(histogram)
    this.#running = true
  }

  /** Heap used after a forced full GC, in bytes; `undefined` (and no GC) when the process runs without `--expose-gc`. */
  heapAfterGc(): number | undefined {
    if (!canCollect) return undefined
    const measuring = this.#running
    if (measuring) this.stop()
    collect(3)
    const used = process.memoryUsage().heapUsed
    if (measuring) this.startLoop()
    return used
  }

  /** Heap used now, without collecting (for progress lines). */
  heapNow(): number {
    return process.memoryUsage().heapUsed
  }

  /** The event-loop delay of each stretch so far (one per forced GC while measuring, plus one). */
  loopDelay(): LoopDelay[] {
    return this.#stretches.map(toMs)
  }

  /** Stops measuring the event loop. */
  stop(): void {
    this.#stretches.at(-1)?.disable()
    this.#running = false
  }
}
