import type { Clock, TimerHandle } from '../core/clock.js'
import type { FetchTrace } from '../core/fetch-trace.js'
import type { Flight } from './flight.js'

/**
 * One caller with a signal or a deadline, waiting on a flight. It is answered exactly once: by its
 * flight's outcome (or the graced value of a soft timeout), by its own deadline, or by its own
 * signal. Created and written only by the owner (`flight` by `Flight.join`): it installs the
 * deadline and soft-timeout timers and the abort listener (as an effect, after the turn that joined
 * the waiter), and removes them when the waiter is answered; its own soft timer clears `#soft`.
 */
export class Waiter<V> {
  /** The flight it waits on; undefined when it was answered without one (from a row). */
  flight: Flight<V> | undefined = undefined
  /** True once answered; later answers are ignored. */
  settled = false
  /** Set by the owner when its soft timeout passed with no graced value known: a graced L2 entry its flight reports later answers it. */
  softDue = false
  /** The caller's record for `echostore:fetch`, when it is traced. Set by the owner as it creates the waiter. */
  trace: FetchTrace | undefined = undefined
  /** A forced refresh's caller: its loader answers it, never a graced value (see `Flight.forcedWaiting`). Set by the owner as it creates the waiter. */
  forced = false
  #deadline: TimerHandle | undefined = undefined
  #onAbort: (() => void) | undefined = undefined

  #soft: TimerHandle | undefined = undefined

  constructor(
    /** The caller's signal, if any. */
    readonly signal: AbortSignal | undefined,
    /** The caller's own timeout in ms, if any. */
    readonly timeout: number | undefined,
    /** Ms after which the caller takes a graced value, if there is one. */
    readonly softTimeout: number | undefined,
    private readonly resolveFn: (value: V | undefined) => void,
    private readonly rejectFn: (error: unknown) => void,
    private readonly clock: Clock,
  ) {}

  /**
   * True while the table's soft timeout answers it a graced value early: it is still waiting, it is
   * no forced refresh's caller (its loader answers it), and it brought no soft timeout of its own
   * (that one replaces the table's for it).
   */
  get takesTableSoftTimeout(): boolean {
    return !this.settled && !this.forced && this.softTimeout === undefined
  }

  /** Arms the caller's deadline and soft timeout and listens to its signal; each calls `leave` once. Does nothing once answered. */
  listen(leave: (reason: 'timeout' | 'cancel' | 'soft') => void): void {
    if (this.settled) return
    if (this.timeout !== undefined) this.#deadline = this.clock.setTimeout(() => leave('timeout'), this.timeout)
    if (this.softTimeout !== undefined) this.#soft = this.clock.setTimeout(() => ((this.#soft = undefined), leave('soft')), this.softTimeout)
    if (this.signal !== undefined) {
      const onAbort = () => leave('cancel')
      this.signal.addEventListener('abort', onAbort, { once: true }) // may throw (a hostile signal): the owner then refuses the waiter
      this.#onAbort = onAbort
    }
  }

  /** Answers with a value; returns false when the waiter had already been answered. */
  resolve(value: V | undefined): boolean {
    if (this.settled) return false
    this.#release()
    this.resolveFn(value)
    return true
  }

  /** Answers with an error; returns false when the waiter had already been answered. */
  reject(error: unknown): boolean {
    if (this.settled) return false
    this.#release()
    this.rejectFn(error)
    return true
  }

  #release(): void {
    this.settled = true
    if (this.#deadline !== undefined) this.clock.clearTimeout(this.#deadline)
    if (this.#soft !== undefined) this.clock.clearTimeout(this.#soft)
    const onAbort = this.#onAbort
    this.#deadline = undefined
    this.#soft = undefined
    this.#onAbort = undefined
    if (onAbort === undefined) return
    try {
      this.signal!.removeEventListener('abort', onAbort)
    } catch {
      // A signal that cannot stop listening (a hostile one) keeps a listener that does nothing more:
      // the waiter is settled, so the owner ignores its leaving. Its answer, and the next waiter's, go on.
    }
  }
}
