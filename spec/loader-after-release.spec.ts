/**
 * What a loader sees of its flight once the flight is released: when `loadTimeout` passes, or the
 * last waiter leaves by cancellation, the loader's signal aborts, however late the loader first
 * reads it; and a flight released before its loader was due never calls it.
 */
import { describe, expect, it } from 'vitest'
import { type LoaderContext, createTable } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { latchedLoader, outcome, settle } from './support/latch.js'

describe('a loader whose flight was released', () => {
  // The signal is made on its first read; a loader that reads it only after an await (after
  // loadTimeout passed) must still get an aborted one.
  it('finds its signal aborted even when it first reads it after loadTimeout passed', async () => {
    const clock = manualClock()
    const table = createTable<string | undefined>({ clock, loadTimeout: 100 })
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

  // A signal that aborts in the turn of its fetch releases the flight in the owner's first turn
  // (`abandoned`): without an L2 in between, the runner must not call the loader at all.
  it('is never left running when the flight was abandoned in the turn it started (no L2)', async () => {
    const table = createTable<string | undefined>({ clock: manualClock() })
    const origin = latchedLoader<string>()
    const controller = new AbortController()
    const waiter = outcome(table.fetch('k', origin.loader, { signal: controller.signal }))
    controller.abort(new Error('left at once'))
    await settle()
    expect(waiter.state).toBe('rejected')
    expect(table.stats()).toMatchObject({ flights: 1, abandoned: 1, inflight: 0, loads: 0 })
    expect(origin.calls).toHaveLength(0)
    await table.close()
  })
})
