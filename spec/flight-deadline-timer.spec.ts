/**
 * The flights' deadline timer outlives the last flight, in the background: the next flight finds it
 * set and costs no timer, a flight started under it still times out at its own bound, and it never
 * keeps the process alive or outlives the table.
 */
import { describe, expect, it } from 'vitest'
import { LoadTimeoutError, createTable } from '../src/index.js'
import { type ManualClock, manualClock } from '../src/testing.js'
import { advanceSettled, latchedLoader, outcome, settle } from './support/latch.js'
import { runAlone } from './support/run-alone.js'

/** A timer of {@link refClock}: a manual clock's, with a Node timer's `ref` and `unref`. */
interface RefTimer {
  inner: unknown
  refed: boolean
  ref(): void
  unref(): void
}

/** A manual clock whose timers have `ref` and `unref` as Node's do, counting the timers set. */
function refClock(): ManualClock & { timersSet: number; live: Set<RefTimer>; last: RefTimer | undefined } {
  const manual = manualClock(0)
  const live = new Set<RefTimer>()
  const clock = {
    ...manual,
    timersSet: 0,
    live,
    last: undefined as RefTimer | undefined,
    setTimeout(fn: () => void, ms: number): RefTimer {
      clock.timersSet++
      const timer: RefTimer = {
        inner: undefined,
        refed: true,
        ref: () => void (timer.refed = true),
        unref: () => void (timer.refed = false),
      }
      timer.inner = manual.setTimeout(() => {
        live.delete(timer)
        fn()
      }, ms)
      live.add(timer)
      clock.last = timer
      return timer
    },
    clearTimeout(handle: unknown): void {
      live.delete(handle as RefTimer)
      manual.clearTimeout((handle as RefTimer).inner)
    },
  }
  return clock
}

const LOAD_TIMEOUT = 1_000
/** A sweep interval beyond every test's span: the sweeper's tick (a background timer of its own) never runs here. */
const SWEEP = 1_000_000

describe("the flights' deadline timer", () => {
  it('stays set in the background after the last flight; the next flight sets no timer and brings it to the foreground', async () => {
    const clock = refClock()
    const table = createTable<string>({ clock, loadTimeout: LOAD_TIMEOUT, sweepInterval: SWEEP })
    const sweeperTimers = clock.timersSet
    expect(await table.fetch('a', async () => 'A')).toBe('A')
    expect(clock.timersSet).toBe(sweeperTimers + 1)
    const deadline = clock.last!
    expect(clock.live.has(deadline), 'the deadline timer is left set').toBe(true)
    expect(deadline.refed, 'in the background').toBe(false)

    const origin = latchedLoader<string>()
    const b = table.fetch('b', origin.loader)
    await settle()
    expect(clock.timersSet, 'the next flight sets no timer').toBe(sweeperTimers + 1)
    expect(deadline.refed, 'a running flight keeps the process alive').toBe(true)
    origin.only().resolve('B')
    expect(await b).toBe('B')
    expect(deadline.refed).toBe(false)
    await table.close()
    expect(clock.live.size, 'close cancels it').toBe(0)
  })

  it('a flight started under the left-over timer still times out at its own bound, not before', async () => {
    const clock = refClock()
    const table = createTable<string>({ clock, loadTimeout: LOAD_TIMEOUT, sweepInterval: SWEEP })
    expect(await table.fetch('a', async () => 'A')).toBe('A') // leaves the timer set for t = 1,000
    await advanceSettled(clock, 400)
    const hanging = outcome(table.fetch('b', () => new Promise<string>(() => {}))) // bound: t = 1,400
    await settle() // the flight starts
    await advanceSettled(clock, 999) // t = 1,399: the left-over timer fired at 1,000 and was set again
    expect(hanging.state).toBe('pending')
    await advanceSettled(clock, 1)
    expect(hanging.state).toBe('rejected')
    expect(hanging.error).toBeInstanceOf(LoadTimeoutError)
    expect(table.stats()).toMatchObject({ load_errors: 1, inflight: 0 })
    await table.close()
  })

  it('fires once with nothing running and is gone: an idle table holds no deadline timer', async () => {
    const clock = refClock()
    const table = createTable<string>({ clock, loadTimeout: LOAD_TIMEOUT, sweepInterval: SWEEP })
    const idle = clock.pending()
    expect(await table.fetch('a', async () => 'A')).toBe('A')
    expect(clock.pending()).toBe(idle + 1)
    await advanceSettled(clock, LOAD_TIMEOUT)
    expect(clock.pending()).toBe(idle)
    expect(table.stats()).toMatchObject({ load_errors: 0, hits: 0, misses: 1, fills: 1 })
    expect(await table.fetch('a', async () => 'again')).toBe('A') // the row is untouched
    await table.close()
  })

  it('is cancelled after the last flight on a clock whose timers cannot go to the background', async () => {
    const clock = manualClock(0)
    const table = createTable<string>({ clock, loadTimeout: LOAD_TIMEOUT, sweepInterval: SWEEP })
    const idle = clock.pending()
    expect(await table.fetch('a', async () => 'A')).toBe('A')
    expect(clock.pending()).toBe(idle)
    await table.close()
  })

  it('never keeps the process alive: a script whose table answered and stays open exits at once', async () => {
    const run = await runAlone('answered-fetch-table-open.ts')
    expect(run.stdout).toContain('answered A')
    expect(run.code).toBe(0)
  })
})
