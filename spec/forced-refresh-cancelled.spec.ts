/**
 * A forced refresh whose every caller leaves by its signal undoes nothing it superseded: the id's
 * unforced flight still in progress is joinable again and its answer is stored, so a plain read made
 * meanwhile joins it rather than start another load, and nothing is fenced. A change of the id made
 * meanwhile still fences it, as any change does.
 */ import { describe, expect, it } from 'vitest'
import { createTable } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { latchedLoader, outcome, settle } from './support/latch.js'

describe('a forced refresh whose caller cancels', () => {
  for (const when of ['after its flight started', 'in the turn it was made'] as const) {
    it(`leaves the id's unforced flight joinable and stored (${when})`, async () => {
      const origin = latchedLoader<string>()
      const table = createTable<string | undefined>({ clock: manualClock(0), ttl: 1_000, jitter: 0, sweepInterval: 1e9 })
      const first = outcome(table.fetch('k', origin.loader))
      await settle()
      expect(origin.calls).toHaveLength(1)

      const leaving = new AbortController()
      const forced = outcome(table.fetch('k', origin.loader, { forceRefresh: true, signal: leaving.signal }))
      if (when === 'after its flight started') await settle()
      leaving.abort(new Error('client went away'))
      await settle()
      expect(forced.state).toBe('rejected')
      expect(table.stats()).toMatchObject({ abandoned: 1 })

      // The forced refresh is gone: a plain read joins the flight still loading k.
      const later = outcome(table.fetch('k', origin.loader))
      await settle()
      const loadsAfterAbort = origin.calls.length
      origin.calls[0]!.resolve('v1')
      await settle()
      for (const call of origin.calls.slice(1)) call.resolve('v-other')
      await settle()
      expect(first.value).toBe('v1')
      expect(later.value).toBe('v1')
      expect(loadsAfterAbort).toBe(when === 'after its flight started' ? 2 : 1)
      expect(table.stats().fenced).toBe(0)
      const s = table.stats()
      expect(s.misses).toBe(s.flights + s.coalesced)
      await table.close()
    })
  }

  it('a change of the id made meanwhile still fences the flight it superseded', async () => {
    const origin = latchedLoader<string>()
    const table = createTable<string | undefined>({ clock: manualClock(0), ttl: 1_000, jitter: 0, sweepInterval: 1e9 })
    const first = outcome(table.fetch('k', origin.loader))
    await settle()
    const leaving = new AbortController()
    const forced = outcome(table.fetch('k', origin.loader, { forceRefresh: true, signal: leaving.signal }))
    await settle()
    await table.invalidate('k')
    leaving.abort(new Error('client went away'))
    await settle()
    expect(forced.state).toBe('rejected')
    origin.calls[0]!.resolve('from before the change')
    await settle()
    expect(first.value).toBe('from before the change') // its caller gets it
    expect(table.peek('k')).toBeUndefined() // and it is not stored
    expect(table.stats().fenced).toBe(1)
    await table.close()
  })
})
