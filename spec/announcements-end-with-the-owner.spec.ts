/**
 * A lease holder announces its fill (or that it filled nothing) on the bus without anyone awaiting
 * it. That publish is bounded like every other, but its bound keeps no process alive, and a table
 * that closes while one is in progress ends it: no timer of the table is left on its clock, and
 * nothing is counted or told after it closed.
 */
import { describe, expect, it } from 'vitest'
import { createTable, localBus, memoryL2 } from '../src/index.js'
import type { Bus } from '../src/store.js'
import { manualClock } from '../src/testing.js'
import { settle } from './support/latch.js'

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
})
