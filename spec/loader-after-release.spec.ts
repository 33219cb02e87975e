/**
 * What a loader sees of its flight once the flight is released: the README says that when
 * `loadTimeout` passes, or the last waiter leaves by cancellation, "the loader's signal aborts".
 * Found by the soak (`npm run soak`: "every loader settled"), where a loader that waits for its
 * signal stayed pending for ever on the table without L2.
 */
import { describe, expect, it } from 'vitest'
import { type LoaderContext, createTable, manualClock } from '../src/index.js'
import { latchedLoader, outcome, settle } from './support/latch.js'

describe('a loader whose flight was released', () => {
  // Bug: FlightContext creates its AbortController on the first read of `signal`, and `abort()`
  // does nothing while there is none; a loader that reads `signal` only after an await (after
  // loadTimeout passed) gets a fresh signal that never aborts, so its work is never cancelled.
  it.fails('finds its signal aborted even when it first reads it after loadTimeout passed', async () => {
    const clock = manualClock()
    const table = createTable<string>({ clock, loadTimeout: 100 })
    const origin = latchedLoader<string>()
    const waiter = outcome(table.fetch('k', origin.loader))
    await settle()
    clock.advance(100)
    await settle()
    expect(waiter).toMatchObject({ state: 'rejected', error: { code: 'ECHOSTORE_LOAD_TIMEOUT' } })
    const context: LoaderContext = origin.only().context
    expect(context.signal.aborted).toBe(true)
    await table.close()
  })

  // Bug: a signal that aborts in the turn of its fetch releases the flight in the owner's first turn
  // (`abandoned`), but without an L2 the flight's runner still calls the loader (run-flight.ts checks
  // `flight.running` only after the L2 read), counts it in `loads`, and hands it a signal that never
  // aborts (see above): origin work nobody waits for, never cancelled.
  it.fails('is never left running when the flight was abandoned in the turn it started (no L2)', async () => {
    const table = createTable<string>({ clock: manualClock() })
    const origin = latchedLoader<string>()
    const controller = new AbortController()
    const waiter = outcome(table.fetch('k', origin.loader, { signal: controller.signal }))
    controller.abort(new Error('left at once'))
    await settle()
    expect(waiter.state).toBe('rejected')
    expect(table.stats()).toMatchObject({ flights: 1, abandoned: 1, inflight: 0 })
    // Not called at all, or called with its signal already aborted.
    expect(origin.calls.map((call) => call.context.signal.aborted)).not.toContain(false)
    await table.close()
  })
})
