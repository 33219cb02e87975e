/**
 * A forced refresh whose every caller leaves by its signal undoes nothing it superseded: the id's
 * unforced flight still in progress is joinable again and its answer is stored, so a plain read made
 * meanwhile joins it rather than start another load, and nothing is fenced. A change of the id made
 * meanwhile still fences it, as any change does. It restores only what it superseded itself, and
 * nothing when a newer forced refresh superseded it in turn.
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

  it('a cancelled forced refresh does not revive a flight a finished forced refresh superseded', async () => {
    const origin = latchedLoader<string>()
    const table = createTable<string | undefined>({ clock: manualClock(0), ttl: 1_000, jitter: 0, sweepInterval: 1e9 })
    const plain = outcome(table.fetch('k', origin.loader)) // A, call 0
    await settle()
    const f0 = outcome(table.fetch('k', origin.loader, { forceRefresh: true })) // F0 supersedes A, call 1
    await settle()
    origin.calls[1]!.resolve('fresh (F0)')
    await settle()
    expect(f0.value).toBe('fresh (F0)')
    expect(table.peek('k')).toBe('fresh (F0)')

    const leaving = new AbortController()
    const f1 = outcome(table.fetch('k', origin.loader, { forceRefresh: true, signal: leaving.signal })) // F1, call 2
    await settle()
    leaving.abort(new Error('gone')) // F1 abandoned: it restores nothing, as A was superseded by F0
    await settle()
    expect(f1.state).toBe('rejected')

    origin.calls[0]!.resolve('old (A, loaded before F0)')
    await settle()
    expect(plain.value).toBe('old (A, loaded before F0)')
    expect(table.peek('k')).toBe('fresh (F0)')
    const s = table.stats()
    expect(s.fenced).toBe(1) // A's answer is fenced, as before the change
    await table.close()
  })

  it('a cancelled first forced refresh does not let an older load overwrite the second one', async () => {
    const origin = latchedLoader<string>()
    const table = createTable<string | undefined>({ clock: manualClock(0), ttl: 1_000, jitter: 0, sweepInterval: 1e9, coalesce: false })
    const plain = outcome(table.fetch('k', origin.loader)) // A
    await settle()
    const leaving = new AbortController()
    const f1 = outcome(table.fetch('k', origin.loader, { forceRefresh: true, signal: leaving.signal })) // F1 supersedes A
    await settle()
    const f2 = outcome(table.fetch('k', origin.loader, { forceRefresh: true })) // F2 supersedes F1 (A already)
    await settle()
    expect(origin.calls).toHaveLength(3)
    leaving.abort(new Error('gone')) // F1 abandoned, itself superseded by F2: it restores nothing
    await settle()
    expect(f1.state).toBe('rejected')
    origin.calls[2]!.resolve('fresh (F2)')
    await settle()
    expect(f2.value).toBe('fresh (F2)')
    expect(table.peek('k')).toBe('fresh (F2)')
    origin.calls[0]!.resolve('old (A, loaded before F2)')
    await settle()
    expect(plain.value).toBe('old (A, loaded before F2)')
    // The newer forced refresh's answer stays.
    expect(table.peek('k')).toBe('fresh (F2)')
    await table.close()
  })
})
