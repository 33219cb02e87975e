/**
 * Every caller is answered, whatever happens to the flight it joined: here a herd in which a caller
 * with a signal aborts at once, on a flight whose earlier waiters had all timed out, in the very
 * turn a plain caller joins it (a case the soak met, when such a flight was abandoned then; a flight
 * a caller left by its timeout is now promised to go on, and the canceller leaves alone).
 */
import { describe, expect, it } from 'vitest'
import { createTable } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { latchedLoader, outcome, settle } from './support/latch.js'

describe('a plain caller whose flight is abandoned in the same turn', () => {
  // The mailbox joins a plain miss to the flight it sees in the flights map; a wait message earlier
  // in the same batch releases that flight (its only waiter cancelled: `abandoned`). The owner must
  // then treat the plain callers as a fresh miss, or they would wait for an answer that never comes.
  it('is still answered: it starts a flight of its own, or gets an error', async () => {
    const clock = manualClock()
    const table = createTable<string | undefined>({ clock, loadTimeout: 1_000 })
    const origin = latchedLoader<string>()
    const impatient = outcome(table.fetch('k', origin.loader, { timeout: 10 }))
    await settle()
    clock.advance(10) // the only waiter timed out; the flight goes on with nobody waiting
    await settle()
    expect(impatient.state).toBe('rejected')

    const controller = new AbortController()
    const leaving = outcome(table.fetch('k', origin.loader, { signal: controller.signal }))
    controller.abort() // leaves in the turn it joined: the flight is abandoned
    const plain = outcome(table.fetch('k', origin.loader)) // same turn: the mailbox saw the flight running
    await settle()
    for (const call of origin.calls) call.resolve('v')
    clock.advance(1_000)
    await settle()
    expect(leaving.state).toBe('rejected')
    expect(table.stats()).toMatchObject({ abandoned: 0, inflight: 0 })
    expect(plain.state).not.toBe('pending')
    await table.close()
  })

  it('a flight a caller left by its timeout is promised to go on: the canceller leaves alone, and the plain caller gets its answer', async () => {
    const clock = manualClock()
    const table = createTable<string | undefined>({ clock, loadTimeout: 1_000 })
    const origin = latchedLoader<string>()
    const impatient = outcome(table.fetch('k', origin.loader, { timeout: 10 }))
    await settle()
    clock.advance(10)
    await settle()
    expect(impatient.state).toBe('rejected')
    const controller = new AbortController()
    const leaving = outcome(table.fetch('k', origin.loader, { signal: controller.signal }))
    controller.abort()
    const plain = outcome(table.fetch('k', origin.loader))
    await settle()
    expect(origin.calls).toHaveLength(1)
    origin.only().resolve('v')
    await settle()
    expect(leaving.state).toBe('rejected')
    expect(plain.value).toBe('v')
    expect(table.stats()).toMatchObject({ abandoned: 0, cancelled: 1, timeouts: 1, inflight: 0 })
    await table.close()
  })
})
