import { type Clock, type TimerHandle, inBackground } from '../core/clock.js'

/** Most rows one sweep slice walks: a slice of this size holds the event loop well under a millisecond. */
export const SWEEP_SLICE = 2_048
/** Most real time one sweep slice takes, in ms (a slice the JIT has not compiled yet is slower per row). */
export const SWEEP_SLICE_MS = 1

/**
 * The sweeper's timers: a tick every `interval` ms, and a continuation (a 0 ms timer) when a pass
 * needs another slice. Each asks the owner to sweep; the owner decides whether a pass starts (at
 * most one every `max(sweepInterval, ttl / 16)` ms) and walks it in slices of {@link SWEEP_SLICE}
 * rows, so an expired row is reclaimed within one such period and one tick of its expiry plus the
 * table's grace, and the
 * event loop is never held for long. Its timers never keep the process alive (`inBackground`).
 *
 * Written only by the owner (start, stop, continueSoon) and by its own timer callbacks.
 */
export class Sweeper {
  readonly #clock: Clock
  readonly #interval: number
  readonly #request: (tick: boolean) => void
  #timer: TimerHandle | undefined = undefined
  #continuation: TimerHandle | undefined = undefined
  #stopped = false

  constructor(
    clock: Clock,
    /** Ms between ticks. */
    interval: number,
    /** Asks the owner to sweep; `tick` is false for a continuation slice. */
    request: (tick: boolean) => void,
  ) {
    this.#clock = clock
    this.#interval = interval
    this.#request = request
  }

  /** Starts ticking every `interval` ms. */
  start(): void {
    if (this.#stopped) return
    this.#timer = inBackground(
      this.#clock.setTimeout(() => {
        this.start()
        this.#request(true)
      }, this.#interval),
    )
  }

  /** Asks for the next slice of the running pass, through the clock (so other work runs first). */
  continueSoon(): void {
    if (this.#stopped || this.#continuation !== undefined) return
    this.#continuation = inBackground(
      this.#clock.setTimeout(() => {
        this.#continuation = undefined
        this.#request(false)
      }, 0),
    )
  }

  /** Stops the tick and any pending continuation. Idempotent. */
  stop(): void {
    this.#stopped = true
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer)
    if (this.#continuation !== undefined) this.#clock.clearTimeout(this.#continuation)
    this.#timer = this.#continuation = undefined
  }
}
