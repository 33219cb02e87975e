/**
 * A waiter answered at once (from a row that lands as it joins) leaves no deadline timer and no
 * listener on its signal behind.
 */
import { describe, expect, it } from 'vitest'
import { createTable } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { latchedLoader, settle } from './support/latch.js'

describe('a waiter answered at once', () => {
  it('leaves no deadline timer and no abort listener behind', async () => {
    for (let turns = 0; turns < 6; turns++) {
      const clock = manualClock(1_000)
      const table = createTable<string | undefined>({ clock, coalesce: false, jitter: 0, sweepInterval: 1e9 })
      const origin = latchedLoader<string>()
      const first = table.fetch('a', origin.loader) // a flight that cannot be joined
      await settle()
      table.setCoalescing(true)
      origin.only().resolve('A')
      for (let i = 0; i < turns; i++) await Promise.resolve() // land between the result being posted and processed
      const controller = new AbortController()
      let listeners = 0
      const { signal } = controller
      const add = signal.addEventListener.bind(signal)
      const remove = signal.removeEventListener.bind(signal)
      signal.addEventListener = ((...args: Parameters<typeof add>) => (listeners++, add(...args))) as typeof add
      signal.removeEventListener = ((...args: Parameters<typeof remove>) => (listeners--, remove(...args))) as typeof remove
      const value = await table.fetch('a', () => 'B', { timeout: 5_000, signal }) // 'A' once the first flight's row is in
      expect(['A', 'B']).toContain(value)
      await first
      await table.close()
      expect(clock.pending()).toBe(0)
      expect(listeners).toBe(0)
    }
  })
})
