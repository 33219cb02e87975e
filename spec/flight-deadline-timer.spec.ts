/**
 * The flights' deadline timer is set while a flight runs and cancelled when the last one ends: a
 * flight started afterwards times out at its own bound, an idle table holds no deadline timer, and
 * a table that answered its fetches never keeps the process alive.
 */
import { describe, expect, it } from 'vitest'
import { LoadTimeoutError, createTable } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { advanceSettled, outcome, settle } from './support/latch.js'
import { runAlone } from './support/run-alone.js'

const LOAD_TIMEOUT = 1_000
/** A sweep interval beyond every test's span: the sweeper's tick (a background timer of its own) never runs here. */
const SWEEP = 1_000_000

describe("the flights' deadline timer", () => {
  it('is cancelled when the last flight ends: an idle table holds no deadline timer', async () => {
    const clock = manualClock(0)
    const table = createTable<string>({ clock, loadTimeout: LOAD_TIMEOUT, sweepInterval: SWEEP })
    const idle = clock.pending()
    const loading = outcome(table.fetch('a', () => new Promise<string>(() => {})))
    await settle()
    expect(clock.pending(), 'set while the flight runs').toBe(idle + 1)
    expect(await table.fetch('b', async () => 'B')).toBe('B')
    expect(clock.pending(), "still set: a's flight runs").toBe(idle + 1)
    await advanceSettled(clock, LOAD_TIMEOUT)
    expect(loading.state).toBe('rejected')
    expect(clock.pending(), 'cancelled once no flight runs').toBe(idle)
    await table.close()
  })

  it('a flight started after the last one ended times out at its own bound, not before', async () => {
    const clock = manualClock(0)
    const table = createTable<string>({ clock, loadTimeout: LOAD_TIMEOUT, sweepInterval: SWEEP })
    expect(await table.fetch('a', async () => 'A')).toBe('A')
    await advanceSettled(clock, 400)
    const hanging = outcome(table.fetch('b', () => new Promise<string>(() => {}))) // bound: t = 1,400
    await settle() // the flight starts
    await advanceSettled(clock, 999)
    expect(hanging.state).toBe('pending')
    await advanceSettled(clock, 1)
    expect(hanging.state).toBe('rejected')
    expect(hanging.error).toBeInstanceOf(LoadTimeoutError)
    expect(table.stats()).toMatchObject({ load_errors: 1, inflight: 0 })
    await table.close()
  })

  it('never keeps the process alive once the fetches are answered: a script whose table stays open exits at once', async () => {
    const run = await runAlone('answered-fetch-table-open.ts')
    expect(run.stdout).toContain('answered A')
    expect(run.code).toBe(0)
  })
})
