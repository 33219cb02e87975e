import { describe, expect, it } from 'vitest'
import { createTable } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { latchedLoader, settle } from './support/latch.js'

// A flight stores its answer at the slot its id's row had when it started, unless something moved it
// meanwhile: these are the writers that can, each making the flight look its id up again.
describe('a flight stores its answer where its id’s row is now', () => {
  it('a solo flight fills the id while its joinable flight runs: the joinable answer replaces that row, still one row', async () => {
    const table = createTable<string>({ clock: manualClock() })
    const origin = latchedLoader<string>()
    const joined = table.fetch('k', origin.loader)
    await settle()
    table.setCoalescing(false)
    const alone = table.fetch('k', origin.loader)
    await settle()
    expect(origin.calls).toHaveLength(2)
    origin.calls[1]!.resolve('solo')
    expect(await alone).toBe('solo')
    expect(table.size).toBe(1)
    origin.calls[0]!.resolve('joined')
    expect(await joined).toBe('joined')
    expect(table.peek('k')).toBe('joined')
    expect(table.size).toBe(1)
    expect(table.stats()).toMatchObject({ fills: 2, inflight: 0 })
    await table.close()
  })

  it('the sweeper reclaims the expired row while its id loads again, and another id takes the slot: each id keeps its own row', async () => {
    const clock = manualClock(0)
    const table = createTable<string>({ clock, ttl: 100, jitter: 0, sweepInterval: 15 })
    const origin = latchedLoader<string>()
    const first = table.fetch('k', origin.loader)
    await settle()
    origin.calls[0]!.resolve('k1')
    expect(await first).toBe('k1')
    clock.set(100) // the row of k expires, between two sweeper ticks
    const again = table.fetch('k', origin.loader) // its flight starts where the expired row is
    await settle()
    expect(table.size).toBe(1)
    clock.set(105) // a sweeper tick: the expired row goes
    await settle()
    clock.set(120)
    await settle()
    expect(table.size).toBe(0)
    const other = table.fetch('other', origin.loader)
    await settle()
    origin.calls[2]!.resolve('o1') // fills the slot k's row had
    expect(await other).toBe('o1')
    origin.calls[1]!.resolve('k2')
    expect(await again).toBe('k2')
    expect(table.peek('k')).toBe('k2')
    expect(table.peek('other')).toBe('o1')
    expect(table.size).toBe(2)
    await table.close()
  })
})
