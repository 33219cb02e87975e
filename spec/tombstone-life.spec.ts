/**
 * How long an L2 tombstone stands: `max(ttl, the flight's bound, 3 L2 timeouts)`, to the ms, where a
 * flight's bound is `loadTimeout`, plus with `lease` its `wait` and five L2 timeouts: past every
 * flight that could write behind it, and no longer.
 */
import { describe, expect, it } from 'vitest'
import { createTable, localBus, memoryL2 } from '../src/index.js'
import { manualClock } from '../src/testing.js'

const L2_TIMEOUT = 50 // DEFAULT_L2_TIMEOUT: memoryL2 names no timeout of its own

describe('an L2 tombstone', () => {
  it('with lease: stands max(ttl, loadTimeout + wait + 5 L2 timeouts, 3 L2 timeouts), to the ms', async () => {
    const clock = manualClock(0)
    const l2 = memoryL2({ clock })
    const table = createTable<string>({ name: 'tomb', clock, ttl: 100, jitter: 0, sweepInterval: 1e9, loadTimeout: 1_000, l2, bus: localBus(), lease: { ttl: 1_000, wait: 5_000 } })
    await table.invalidate('a')
    const life = 1_000 + 5_000 + 5 * L2_TIMEOUT
    clock.advance(life - 1)
    expect((await l2.get('tomb', 'a'))?.kind).toBe('tombstone')
    clock.advance(1)
    expect(await l2.get('tomb', 'a')).toBeUndefined()
    await table.close()
  })

  it('without lease and with a short ttl and loadTimeout: stands 3 L2 timeouts', async () => {
    const clock = manualClock(0)
    const l2 = memoryL2({ clock })
    const table = createTable<string>({ name: 'tomb', clock, ttl: 10, jitter: 0, sweepInterval: 1e9, loadTimeout: 20, l2 })
    await table.invalidate('a')
    clock.advance(3 * L2_TIMEOUT - 1)
    expect((await l2.get('tomb', 'a'))?.kind).toBe('tombstone')
    clock.advance(1)
    expect(await l2.get('tomb', 'a')).toBeUndefined()
    await table.close()
  })

  it('without lease and with a long ttl: stands ttl', async () => {
    const clock = manualClock(0)
    const l2 = memoryL2({ clock })
    const table = createTable<string>({ name: 'tomb', clock, ttl: 40_000, jitter: 0, sweepInterval: 1e9, loadTimeout: 1_000, l2 })
    await table.invalidate('a')
    clock.advance(40_000 - 1)
    expect((await l2.get('tomb', 'a'))?.kind).toBe('tombstone')
    clock.advance(1)
    expect(await l2.get('tomb', 'a')).toBeUndefined()
    await table.close()
  })
})
