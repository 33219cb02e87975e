/**
 * `load_errors`: "flights that ended in an error (the loader threw or rejected, or `loadTimeout`
 * passed, in L2 or in the loader, ...)". A flight whose L2 read is still pending when its bound
 * passes ends in LoadTimeoutError, counted in load_errors, without calling the loader.
 */
import { describe, expect, it } from 'vitest'
import { type Id, LoadTimeoutError, createTable, memoryL2 } from '../src/index.js'
import { chaosL2, manualClock } from '../src/testing.js'
import { advanceSettled, outcome, settle } from './support/latch.js'

describe('a flight whose bound passes while it waits on L2', () => {
  it('rejects its waiters with LoadTimeoutError and counts one load error, and no load', async () => {
    const clock = manualClock()
    const l2 = chaosL2(memoryL2({ clock }), clock) // the store's own timeout (50 ms) is longer than the bound
    const table = createTable<string, Id>({ clock, l2, loadTimeout: 10 })
    l2.fail('get', { kind: 'stall' })
    let loads = 0
    const readers = [outcome(table.fetch('k', () => (loads++, 'v'))), outcome(table.fetch('k', () => (loads++, 'v')))]
    await settle()
    await advanceSettled(clock, 10)
    for (const reader of readers) expect(reader.error).toBeInstanceOf(LoadTimeoutError)
    expect(readers[0]!.error).toBe(readers[1]!.error)
    expect(loads).toBe(0)
    expect(table.stats()).toMatchObject({ flights: 1, coalesced: 1, load_errors: 1, loads: 0, l2_hits: 0, inflight: 0 })
    l2.heal()
    await advanceSettled(clock, 100)
    expect(loads).toBe(0) // the released flight never reaches the loader
    await table.close()
  })
})
