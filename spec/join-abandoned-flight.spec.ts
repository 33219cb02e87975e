/**
 * Every caller is answered, whatever happens to the flight it joined. Found by the soak
 * (`npm run soak` hung at its deadline with a worker waiting for ever on a plain fetch): a herd
 * in which a caller with a signal aborts at once, on a flight whose earlier waiters had all timed out.
 */
import { describe, expect, it } from 'vitest'
import { createTable, manualClock } from '../src/index.js'
import { latchedLoader, outcome, settle } from './support/latch.js'

describe('a plain caller whose flight is abandoned in the same turn', () => {
  // Bug: the mailbox joins a plain miss to the flight it sees in the flights map; when a wait message
  // earlier in the same batch releases that flight (its only waiter cancelled: `abandoned`), the
  // owner's onPlainMiss finds it neither running nor answered nor sharing a promise, and settles the
  // plain caller's promise with nothing: it stays pending for ever (inflight is already 0, and
  // loadTimeout no longer applies to a released flight).
  it.fails('is still answered: it starts a flight of its own, or gets an error', async () => {
    const clock = manualClock()
    const table = createTable<string>({ clock, loadTimeout: 1_000 })
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
    expect(table.stats()).toMatchObject({ abandoned: 1, inflight: 0 })
    expect(plain.state).not.toBe('pending')
    await table.close()
  })
})
