import type { TimerHandle } from '../clock.js'
import type { Flight } from './flight.js'

/**
 * One caller waiting on a flight. It is answered exactly once: by its flight's outcome, by its
 * own deadline, or by its own signal. Every field is written only by the owner, except the
 * deadline timer and the abort listener, which the table installs once, right after the miss is sent.
 */
export class Waiter<V> {
  /** The flight it waits on; set by the owner when the miss is processed. */
  flight: Flight<V> | undefined = undefined
  /** True once answered; later answers are ignored. */
  settled = false
  /** This waiter's own deadline timer, if it asked for a `timeout`. */
  deadline: TimerHandle | undefined = undefined
  /** The caller's signal and its listener, removed when the waiter is answered. */
  signal: AbortSignal | undefined = undefined
  onAbort: (() => void) | undefined = undefined

  constructor(
    private readonly resolveFn: (value: V | undefined) => void,
    private readonly rejectFn: (error: unknown) => void,
    private readonly clearTimer: (handle: TimerHandle) => void,
  ) {}

  /** Answers with a value; returns false when the waiter had already been answered. */
  resolve(value: V | undefined): boolean {
    if (this.settled) return false
    this.release()
    this.resolveFn(value)
    return true
  }

  /** Answers with an error; returns false when the waiter had already been answered. */
  reject(error: unknown): boolean {
    if (this.settled) return false
    this.release()
    this.rejectFn(error)
    return true
  }

  private release(): void {
    this.settled = true
    if (this.deadline !== undefined) this.clearTimer(this.deadline)
    if (this.onAbort !== undefined) this.signal!.removeEventListener('abort', this.onAbort)
    this.deadline = undefined
    this.onAbort = undefined
    this.signal = undefined
  }
}
