/**
 * A count that reaches the owner after it stopped is still counted: with `closeStores: true`, a
 * lease holder whose loader answers after `loadTimeout` released it, and after the table closed its
 * bus, fails to publish; that failure is an `error` event and one `bus_errors`, as before the close.
 */
import { describe, expect, it } from 'vitest'
import { BusClosedError, createTable, localBus, memoryL2 } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { advanceSettled, latchedLoader, outcome } from './support/latch.js'

describe('a count posted to a stopped owner', () => {
  for (const answer of ['resolves', 'rejects'] as const) {
    it(`a late lease holder whose loader ${answer} after closeStores closed the bus counts its failed publish in bus_errors`, async () => {
      const clock = manualClock(0)
      const table = createTable<string>({ name: 'late', clock, l2: memoryL2({ clock }), bus: localBus(), lease: { ttl: 300, wait: 600 }, loadTimeout: 500, closeStores: true })
      const busErrors: unknown[] = []
      table.events.on('error', (event) => {
        if (event.error instanceof BusClosedError) busErrors.push(event.error)
      })
      const origin = latchedLoader<string>()
      const read = outcome(table.fetch('x', origin.loader))
      await advanceSettled(clock, 0)
      expect(origin.calls).toHaveLength(1)
      const closed = outcome(table.close())
      await advanceSettled(clock, 3_000)
      expect(read.state).toBe('rejected') // loadTimeout released the flight; the owner stopped, the bus closed
      expect(closed.state).toBe('fulfilled')
      expect(table.stats().bus_errors).toBe(0)
      if (answer === 'resolves') origin.only().resolve('late')
      else origin.only().reject(new Error('late failure'))
      await advanceSettled(clock, 3_000)
      expect(busErrors).toHaveLength(1)
      expect(table.stats().bus_errors).toBe(1)
      expect(clock.pending()).toBe(0)
    })
  }
})
