/**
 * How long an L2 tombstone stands: `max(ttl, the flight's bound, 3 L2 timeouts)`, to the ms, where a
 * flight's bound is `loadTimeout`, plus with `lease` its `wait` and five L2 timeouts: past every
 * flight that could write behind it, and no longer.
 */
import { describe, expect, it } from 'vitest'
import { createTable, localBus, memoryL2 } from '../src/index.js'
import { manualClock } from '../src/testing.js'

const L2_TIMEOUT = 50 // DEFAULT_L2_TIMEOUT: memoryL2 names no timeout of its own

/** Each case: the table's options beside the store (made in its test), and the life its tombstone must stand, to the ms. */
const CASES = [
  {
    name: 'with lease: stands max(ttl, loadTimeout + wait + 5 L2 timeouts, 3 L2 timeouts), to the ms',
    options: () => ({ ttl: 100, loadTimeout: 1_000, bus: localBus(), lease: { ttl: 1_000, wait: 5_000 } }),
    life: 1_000 + 5_000 + 5 * L2_TIMEOUT,
  },
  { name: 'without lease and with a short ttl and loadTimeout: stands 3 L2 timeouts', options: () => ({ ttl: 10, loadTimeout: 20 }), life: 3 * L2_TIMEOUT },
  { name: 'without lease and with a long ttl: stands ttl', options: () => ({ ttl: 40_000, loadTimeout: 1_000 }), life: 40_000 },
]

describe('an L2 tombstone', () => {
  for (const { name, options, life } of CASES) {
    it(name, async () => {
      const clock = manualClock(0)
      const l2 = memoryL2({ clock })
      const table = createTable<string>({ name: 'tomb', clock, jitter: 0, sweepInterval: 1e9, l2, ...options() })
      await table.invalidate('a')
      clock.advance(life - 1)
      expect((await l2.get('tomb', 'a'))?.kind).toBe('tombstone')
      clock.advance(1)
      expect(await l2.get('tomb', 'a')).toBeUndefined()
      await table.close()
    })
  }
})
