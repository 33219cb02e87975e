import { badNumber, describe, reasonOf } from './errors.js'
/** The longest delay a Node timer honours (2^31 − 1 ms, about 24.8 days); longer ones fire after 1 ms. */
export const MAX_TIMER_MS = 2_147_483_647

/** A timer handle as returned by a {@link Clock}'s `setTimeout`. */
export type TimerHandle = unknown

/**
 * Time as a table sees it: milliseconds, never negative, never going backwards. Every timer a table uses (sweeper, waiter deadlines, `loadTimeout`,
 * L2 timeouts) goes through its clock, so tests drive all of it with {@link manualClock}.
 */
export interface Clock {
  /** Milliseconds on this clock's time line. */
  now(): number
  /** Runs `fn` once, `ms` from now. A timer of {@link systemClock} keeps the process alive until it runs, as a Node timer does. */
  setTimeout(fn: () => void, ms: number): TimerHandle
  /** Cancels a timer; unknown or already-run handles are ignored. */
  clearTimeout(handle: TimerHandle): void
}

// The system clock's cached millisecond, shared by every table: written only by `coarseNow` (a
// fresh read) and by its own 1 ms timer (`staleNow`, which marks it stale).
let cachedNow = 0
let nowIsFresh = false
const staleNow = () => {
  nowIsFresh = false
}

/** The wall-clock instant this process's monotonic time line starts at (ms since the epoch). */
const ORIGIN = performance.timeOrigin

/**
 * The system clock's reading, in whole ms: the wall-clock instant the process started plus the
 * monotonic time since (`performance.now()`, as lru-cache and Caffeine measure lifetimes), so it never
 * goes backwards and a wall-clock step (NTP, an operator, `date -s`) neither stretches nor cuts a
 * lifetime, a bound, a back-off or a lease, nor lowers a version minted afterwards. Read at most once
 * per millisecond: the value is cached until a 1 ms `unref()`'d timer marks it stale (as lru-cache
 * does), which keeps the clock read off the hit path. While synchronous code runs without yielding,
 * time stands still; expiries are accurate to ~1 ms.
 */
function coarseNow(): number {
  if (nowIsFresh) return cachedNow
  nowIsFresh = true
  cachedNow = Math.floor(ORIGIN + performance.now())
  setTimeout(staleNow, 1).unref()
  return cachedNow
}

/** Marks a timer as background work: a Node timer (one with `unref`) then never keeps the process alive. Returns `handle`. */
export function inBackground(handle: TimerHandle): TimerHandle {
  const unref = (handle as { unref?: unknown } | null)?.unref
  if (typeof unref === 'function') unref.call(handle)
  return handle
}

/**
 * Why `clock`, a user's, cannot be a table's clock: not an object with the three methods of a
 * {@link Clock}, or a `now()` that throws or reads anything but a finite number ≥ 0 (read once,
 * here); `undefined` when it can.
 */
export function unfitClock(clock: unknown): string | undefined {
  if (!isClock(clock)) return 'must be an object with now(), setTimeout(fn, ms) and clearTimeout(handle)'
  let reading: unknown
  try {
    reading = clock.now()
  } catch (error) {
    return `must have a now() that reads a finite number of ms ≥ 0 (it threw: ${reasonOf(error)})`
  }
  return typeof reading === 'number' && Number.isFinite(reading) && reading >= 0 ? undefined : `must have a now() that reads a finite number of ms ≥ 0 (it read ${describe(reading)})`
}

/** True for an object with the three methods of a {@link Clock} (false, too, when reading them throws). */
export function isClock(value: unknown): value is Clock {
  try {
    const clock = value as Partial<Clock> | null
    return typeof clock?.now === 'function' && typeof clock.setTimeout === 'function' && typeof clock.clearTimeout === 'function'
  } catch {
    return false
  }
}

/**
 * The real clock: the process's monotonic time line, anchored at the wall-clock instant it started
 * (see `coarseNow` in this module), read at most once per millisecond, and Node timers. A timer that
 * bounds a caller's pending promise (a flight's `loadTimeout`, a fetch's `timeout`, an L2 call's
 * bound) keeps the process alive until it settles, as the promise would want; background timers
 * (the sweeper) are made with `inBackground` and never do.
 */
export const systemClock: Clock = {
  now: coarseNow,
  setTimeout(fn, ms) {
    return setTimeout(fn, ms)
  },
  clearTimeout(handle) {
    clearTimeout(handle as ReturnType<typeof setTimeout>)
  },
}

/** How long a timer of `ms` waits, as Node's do: a length that is not a number in [1, {@link MAX_TIMER_MS}] waits 1 ms (0 and below: at once). */
function timerLength(ms: number): number {
  if (typeof ms === 'number' && ms <= 0) return 0
  return typeof ms === 'number' && ms <= MAX_TIMER_MS ? ms : 1
}

/** A clock that only moves when told to: for tests, examples and simulations. */
export interface ManualClock extends Clock {
  /** Moves time forward by `ms` and runs every timer that falls due, in due order. */
  advance(ms: number): void
  /** Moves time to `t` (never backwards) and runs every timer that falls due, in due order. */
  set(t: number): void
  /** Timers scheduled and not yet run or cleared. */
  pending(): number
  /** When the earliest timer is due, or `undefined` when none is scheduled: to step time timer by timer, letting promises settle between. */
  nextDue(): number | undefined
}

interface ManualTimer {
  at: number
  seq: number
  fn: () => void
}

/**
 * A manual clock starting at `start`. Timers due at the same instant run in the order they were
 * scheduled; a timer scheduled while `advance` runs, and due within the advanced span, runs too.
 */
export function manualClock(start = 0): ManualClock {
  if (!(typeof start === 'number' && Number.isFinite(start) && start >= 0)) {
    throw badNumber(start, `manualClock: start must be a finite number ≥ 0 (ms; leave it out to start at 0), got ${describe(start)}`)
  }
  let now = start
  let seq = 0
  const timers = new Set<ManualTimer>()

  function nextDue(until: number): ManualTimer | undefined {
    let best: ManualTimer | undefined
    for (const timer of timers) {
      if (timer.at > until) continue
      if (best === undefined || timer.at < best.at || (timer.at === best.at && timer.seq < best.seq)) best = timer
    }
    return best
  }

  function runUntil(target: number): void {
    for (let timer = nextDue(target); timer !== undefined; timer = nextDue(target)) {
      timers.delete(timer)
      now = Math.max(now, timer.at)
      timer.fn()
    }
    now = Math.max(now, target)
  }

  return {
    now: () => now,
    setTimeout(fn, ms) {
      const timer: ManualTimer = { at: now + timerLength(ms), seq: seq++, fn }
      timers.add(timer)
      return timer
    },
    clearTimeout(handle) {
      timers.delete(handle as ManualTimer)
    },
    advance(ms) {
      if (!(typeof ms === 'number' && ms >= 0 && Number.isFinite(now + ms))) {
        throw badNumber(ms, `manualClock.advance: ms must be a finite number ≥ 0, got ${describe(ms)}`)
      }
      runUntil(now + ms)
    },
    set(t) {
      if (!(typeof t === 'number' && Number.isFinite(t))) {
        throw badNumber(t, `manualClock.set: t must be a finite number of ms (a time before now() leaves the clock where it is), got ${describe(t)}`)
      }
      runUntil(t)
    },
    pending: () => timers.size,
    nextDue: () => nextDue(Number.POSITIVE_INFINITY)?.at,
  }
}
