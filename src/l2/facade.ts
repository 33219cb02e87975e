import type { Emitter } from 'mitt'
import type { Clock } from '../clock.js'
import { C } from '../counters.js'
import { emitSafely } from '../emit-safely.js'
import type { Id } from '../id.js'
import type { TableEvents } from '../table-events.js'
import { DEFAULT_L2_TIMEOUT, L2CorruptEntryError, type L2Entry, type L2Store, type L2Write } from './store.js'

/** Consecutive failures (errors or timeouts) that open the breaker. */
export const BREAKER_FAILURES = 5
/** How long an open breaker skips L2, in ms of the table's clock, before it lets a call probe again. */
export const BREAKER_COOLDOWN = 1_000

const FAILED = Symbol('l2 call failed')
type Outcome<T> = T | typeof FAILED

/** What {@link L2Facade.get} answers when L2 could not be asked or did not answer (error, timeout, open breaker). */
export const L2_DOWN = Symbol('L2 down')

/**
 * The table's L2 policy around a dumb {@link L2Store}: every call is bounded by the store's
 * `timeout` on the table's clock, every failure becomes a miss (never an error for the caller),
 * failures are counted, and after {@link BREAKER_FAILURES} consecutive failures a circuit breaker
 * skips L2 for {@link BREAKER_COOLDOWN} ms, then lets calls probe again; the first success closes it.
 *
 * Written by whoever calls it (flights, put, invalidate): only its breaker state and the
 * `l2_*` counters.
 */
export class L2Facade {
  private failures = 0
  private openUntil = 0
  readonly timeout: number

  constructor(
    private readonly store: L2Store,
    private readonly table: string,
    private readonly clock: Clock,
    private readonly counters: Float64Array,
    private readonly events: Emitter<TableEvents>,
  ) {
    this.timeout = store.timeout ?? DEFAULT_L2_TIMEOUT
  }

  /** The live entry, `undefined` on a miss (a corrupt entry included), or {@link L2_DOWN} on a failure, a timeout or an open breaker. */
  async get(id: Id): Promise<L2Entry | undefined | typeof L2_DOWN> {
    const entry = await this.call('get', id, () => this.store.get(this.table, id))
    return entry === FAILED ? L2_DOWN : entry
  }

  /** Writes an entry; `true` written, `false` refused by the version guard, `undefined` not attempted or failed. */
  async set(id: Id, entry: L2Write): Promise<boolean | undefined> {
    const written = await this.call('set', id, () => this.store.set(this.table, id, entry))
    return written === FAILED ? undefined : written
  }

  /** The next version for `id` from the store, or `undefined` when L2 cannot answer. */
  async nextVersion(id: Id): Promise<number | undefined> {
    const version = await this.call('nextVersion', id, () => this.store.nextVersion(this.table, id))
    return version === FAILED ? undefined : version
  }

  /** True while the breaker skips L2. */
  isOpen(): boolean {
    return this.failures >= BREAKER_FAILURES && this.clock.now() < this.openUntil
  }

  private call<T>(op: string, id: Id, run: () => Promise<T>): Promise<Outcome<T>> {
    if (this.isOpen()) {
      this.counters[C.l2_skipped]++
      return Promise.resolve(FAILED)
    }
    return new Promise<Outcome<T>>((resolve) => {
      let done = false
      const timer = this.clock.setTimeout(() => {
        if (done) return
        done = true
        this.counters[C.l2_timeouts]++
        this.failed(op, id, new Error(`echostore: L2 ${op} took longer than ${this.timeout} ms`))
        resolve(FAILED)
      }, this.timeout)
      const settle = (result: Outcome<T>, error?: unknown) => {
        let outcome = result
        if (done) return
        done = true
        this.clock.clearTimeout(timer)
        if (outcome !== FAILED) this.failures = 0
        else if (error instanceof L2CorruptEntryError) {
          this.counters[C.l2_corrupt]++ // L2 answered: a miss, not an outage
          this.failures = 0
          outcome = undefined as T
        } else {
          this.counters[C.l2_errors]++
          this.failed(op, id, error)
        }
        resolve(outcome)
      }
      let pending: Promise<T>
      try {
        pending = run()
      } catch (error) {
        pending = Promise.reject(error)
      }
      pending.then(
        (value) => settle(value),
        (error: unknown) => settle(FAILED, error),
      )
    })
  }

  private failed(op: string, id: Id, error: unknown): void {
    this.failures++
    if (this.failures >= BREAKER_FAILURES) this.openUntil = this.clock.now() + BREAKER_COOLDOWN
    if (this.events.all.size > 0) emitSafely(this.events, 'l2_error', { table: this.table, op, id, error })
  }
}
