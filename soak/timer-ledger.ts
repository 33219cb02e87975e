import { type Clock, type TimerHandle, systemClock } from '../src/index.js'

/** A clock that keeps a ledger of its timers: {@link LedgerClock.pending} counts those armed and neither run nor cleared. */
export interface LedgerClock extends Clock {
  /** Timers armed through this clock that have not run and were not cleared. */
  readonly pending: number
}

/**
 * The system clock, with a ledger of every timer armed through it. Every timer a table or a chaos
 * store uses goes through its clock, so once the tables are closed and the stores healed, a timer
 * still pending here is one the library left behind.
 */
export function ledgerClock(): LedgerClock {
  const armed = new Set<TimerHandle>()
  return {
    now: () => systemClock.now(),
    setTimeout(fn, ms) {
      const handle = systemClock.setTimeout(() => {
        armed.delete(handle)
        fn()
      }, ms)
      armed.add(handle)
      return handle
    },
    clearTimeout(handle) {
      armed.delete(handle)
      systemClock.clearTimeout(handle)
    },
    get pending() {
      return armed.size
    },
  }
}
