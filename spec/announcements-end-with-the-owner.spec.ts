/**
 * A lease holder announces its fill (or that it filled nothing) on the bus without anyone awaiting
 * it. That publish is bounded like every other, but its bound keeps no process alive, and a table
 * that closes while one is in progress ends it: no timer of the table is left on its clock, and
 * nothing is counted or told after it closed, not even a bus failure that comes later, nor an
 * announcement made after the owner stopped (a holder whose write-back outlived it).
 */
import { describe, expect, it } from 'vitest'
import { createTable, localBus, memoryL2 } from '../src/index.js'
import type { Bus } from '../src/store.js'
import { chaosL2, manualClock } from '../src/testing.js'
import { latchedLoader, outcome, settle } from './support/latch.js'

/** A bus whose publish never settles (a stalled connection), heard as a local bus. */
function stalledBus(): { bus: Bus; published: number } {
  const inner = localBus()
  const box: { bus: Bus; published: number } = {
    published: 0,
    bus: {
      publish: () => (box.published++, new Promise<void>(() => {})),
      subscribe: (handler) => inner.subscribe(handler),
      close: () => inner.close(),
    },
  }
  return box
}

describe("a lease holder's announcement on a stalled bus", () => {
  it('is ended when the table closes: no timer is left on its clock, and no bus error is counted', async () => {
    const clock = manualClock(0)
    const stalled = stalledBus()
    const table = createTable<string>({ clock, l2: memoryL2({ clock }), bus: stalled.bus, lease: true })
    expect(await table.fetch('k', () => 'v')).toBe('v')
    await settle()
    expect(stalled.published).toBe(1) // the fill's announcement, in progress
    expect(clock.pending()).toBeGreaterThan(0)
    await table.close()
    expect(clock.pending()).toBe(0)
    expect(table.stats().bus_errors).toBe(0)
  })

  it('is still bounded while the table is open: counted as a bus error once its bound passes', async () => {
    const clock = manualClock(0)
    const stalled = stalledBus()
    const table = createTable<string>({ clock, l2: memoryL2({ clock }), bus: stalled.bus, lease: true, sweepInterval: 1e9 })
    expect(await table.fetch('k', () => 'v')).toBe('v')
    await settle()
    clock.advance(1_000)
    await settle()
    expect(table.stats().bus_errors).toBe(1)
    await table.close()
    expect(clock.pending()).toBe(0)
  })

  it('made after the owner stopped (a write-back that outlived it) leaves no timer and counts nothing', async () => {
    const clock = manualClock(0)
    const l2 = chaosL2(memoryL2({ clock }), clock)
    const stalled = stalledBus()
    // bound = loadTimeout 100 + lease wait 200 + 5 × 50 (L2 timeouts) = 550
    const table = createTable<string>({ clock, l2, bus: stalled.bus, lease: true, loadTimeout: 100, sweepInterval: 1e9 })
    const origin = latchedLoader<string>()
    const read = outcome(table.fetch('k', origin.loader))
    await settle()
    clock.set(549)
    l2.fail('set', { kind: 'stall' })
    origin.only().resolve('v')
    await settle() // its write-back is in progress
    const closing = table.close()
    await settle()
    clock.advance(1) // its bound passes: released, the owner stops, then the write-back ends
    await settle()
    await closing
    expect(read.state).toBe('rejected')
    expect(stalled.published).toBe(1) // the `unfilled` announcement, made after the owner stopped: still sent
    expect(clock.pending()).toBe(0)
    clock.advance(1_000)
    await settle()
    expect(table.stats().bus_errors).toBe(0)
    l2.heal()
    await settle()
  })

  it('ended by close tells no error when the bus rejects it later', async () => {
    const clock = manualClock(0)
    const inner = localBus()
    const rejects: Array<(error: unknown) => void> = []
    const bus: Bus = {
      publish: () => new Promise<void>((_, reject) => rejects.push(reject)),
      subscribe: (handler) => inner.subscribe(handler),
      close: () => inner.close(),
    }
    const table = createTable<string>({ clock, l2: memoryL2({ clock }), bus, lease: true, sweepInterval: 1e9 })
    const errors: unknown[] = []
    table.events.on('error', (event) => errors.push(event.error))
    expect(await table.fetch('k', () => 'v')).toBe('v')
    await settle()
    expect(rejects).toHaveLength(1) // the fill's announcement, in progress
    await table.close()
    rejects[0]!(new Error('connection reset'))
    await settle()
    expect(errors).toEqual([])
    expect(table.stats().bus_errors).toBe(0)
  })
})
