/**
 * `inflight` counts flights in progress, not fetches pending: a flight a caller left by its
 * `timeout`, or one whose caller stale-while-revalidate answered at once, is still counted once
 * every fetch has settled, and leaves the count when its loader answers.
 */
import { describe, expect, it } from 'vitest'
import { type Id, createTable } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { latchedLoader, outcome, settle } from './support/latch.js'

describe('inflight once every fetch has settled', () => {
  it('still counts the flight its only caller left by its timeout, until the loader answers', async () => {
    const clock = manualClock()
    const table = createTable<string, Id>({ clock, loadTimeout: 1_000 })
    const origin = latchedLoader<string>()
    const impatient = outcome(table.fetch('k', origin.loader, { timeout: 10 }))
    await settle()
    clock.advance(10)
    await settle()
    expect(impatient.state).toBe('rejected') // every fetch has settled
    expect(table.stats().inflight).toBe(1) // the flight goes on, to fill the row
    origin.only().resolve('v')
    await settle()
    expect(table.stats().inflight).toBe(0)
    expect(table.peek('k')).toBe('v')
    await table.close()
  })

  it('still counts the refresh a stale-while-revalidate fetch started, until the loader answers', async () => {
    const clock = manualClock()
    const table = createTable<string, Id>({ clock, ttl: 100, jitter: 0, grace: 1_000, staleWhileRevalidate: true })
    await table.fetch('k', () => 'v1')
    clock.advance(150)
    const origin = latchedLoader<string>()
    expect(await table.fetch('k', origin.loader)).toBe('v1') // every fetch has settled
    expect(table.stats().inflight).toBe(1)
    origin.only().resolve('v2')
    await settle()
    expect(table.stats().inflight).toBe(0)
    expect(table.peek('k')).toBe('v2')
    await table.close()
  })
})
