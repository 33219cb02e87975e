/**
 * A change always beats grace, during the fail-safe's back-off too: once a row's graced value holds
 * the origin off, an invalidate, a tag invalidation, a clear, or an invalidate heard from another
 * process on the bus removes it, and the next fetch asks the origin (whose error it then gets).
 */
import { describe, expect, it } from 'vitest'
import { type Id, type Table, createTable, localBus } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { settle } from './support/latch.js'

const changes: [string, (table: Table<string, Id>, other: Table<string, Id>) => Promise<unknown>][] = [
  ['invalidate', (table) => table.invalidate('k')],
  ['invalidateTags', (table) => table.invalidateTags(['t'])],
  ['clear', (table) => table.clear()],
  ['an invalidate heard on the bus', (_table, other) => other.invalidate('k')],
]

describe("a change during the fail-safe's back-off", () => {
  for (const [name, change] of changes) {
    it(`${name} ends it: the next fetch asks the origin`, async () => {
      const clock = manualClock(0)
      const bus = localBus()
      const options = { name: 'g', ttl: 1_000, jitter: 0, grace: 10_000, graceBackoff: 5_000, sweepInterval: 1e9, clock, bus }
      const table = createTable<string, Id>(options)
      const other = createTable<string, Id>(options)
      await table.fetch('k', (_id, context) => (context.setTags(['t']), 'v1'))
      clock.set(1_500)
      let calls = 0
      const failing = () => (calls++, Promise.reject(new Error('origin down')))
      expect(await table.fetch('k', failing)).toBe('v1')
      expect(await table.fetch('k', failing)).toBe('v1') // within the back-off: no call
      expect(calls).toBe(1)
      await change(table, other)
      await settle()
      await expect(table.fetch('k', failing)).rejects.toThrow('origin down')
      expect(calls).toBe(2)
      await Promise.all([table.close(), other.close()])
      await bus.close()
    })
  }
})
