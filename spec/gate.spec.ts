import { describe, expect, it } from 'vitest'
import { createTable } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { latchedLoader, settle } from './support/latch.js'

describe('the coalescing gate', () => {
  it('coalesce: false makes every miss start its own flight, with the same freshness contract', async () => {
    const clock = manualClock(0)
    const table = createTable<string | undefined>({ coalesce: false, ttl: 1_000, jitter: 0, clock })
    const origin = latchedLoader<string>()
    const readers = Array.from({ length: 3 }, () => table.fetch('k', origin.loader))
    await settle()
    expect(origin.calls).toHaveLength(3)
    expect(table.stats()).toMatchObject({ misses: 3, flights: 3, coalesced: 0, inflight: 3 })
    origin.calls.forEach((call, i) => call.resolve(`v${i}`))
    expect(await Promise.all(readers)).toEqual(['v0', 'v1', 'v2'])
    expect(await table.fetch('k', origin.loader)).toBe('v2') // the last fill wins, cached for ttl
    clock.set(1_000)
    void table.fetch('k', origin.loader)
    await settle()
    expect(origin.calls).toHaveLength(4)
    origin.calls[3]!.resolve('v3')
    await settle()
    await table.close()
  })

  it('turning it off drains: the flight in progress keeps answering the waiters it has; new misses fly alone', async () => {
    const table = createTable<string | undefined>({ clock: manualClock() })
    const origin = latchedLoader<string>()
    const before = [table.fetch('k', origin.loader), table.fetch('k', origin.loader)]
    await settle()
    table.setCoalescing(false)
    const after = [table.fetch('k', origin.loader), table.fetch('k', origin.loader)]
    await settle()
    expect(origin.calls).toHaveLength(3)
    expect(table.stats()).toMatchObject({ coalesced: 1, flights: 3, inflight: 3 })
    origin.calls[0]!.resolve('shared')
    origin.calls[1]!.resolve('solo-1')
    origin.calls[2]!.resolve('solo-2')
    expect(await Promise.all(before)).toEqual(['shared', 'shared'])
    expect(await Promise.all(after)).toEqual(['solo-1', 'solo-2'])
    expect(table.stats()).toMatchObject({ inflight: 0 })

    table.setCoalescing(true)
    await table.invalidate('k')
    const again = [table.fetch('k', origin.loader), table.fetch('k', origin.loader)]
    await settle()
    expect(origin.calls).toHaveLength(4)
    origin.calls[3]!.resolve('coalesced again')
    expect(await Promise.all(again)).toEqual(['coalesced again', 'coalesced again'])
    await table.close()
  })

  it('turning it on again makes new misses coalesce at once, while the solo flights started with it off still run', async () => {
    const table = createTable<string | undefined>({ clock: manualClock() })
    const origin = latchedLoader<string>()
    table.setCoalescing(false)
    const solo = [table.fetch('k', origin.loader), table.fetch('k', origin.loader)]
    await settle()
    expect(origin.calls).toHaveLength(2)
    table.setCoalescing(true)
    const again = [table.fetch('k', origin.loader), table.fetch('k', origin.loader), table.fetch('k', origin.loader)]
    await settle()
    // One new flight for the three, none joining a solo flight (that belongs to its caller alone).
    expect(origin.calls).toHaveLength(3)
    expect(table.stats()).toMatchObject({ misses: 5, flights: 3, coalesced: 2, inflight: 3 })
    origin.calls[0]!.resolve('solo-1')
    origin.calls[1]!.resolve('solo-2')
    origin.calls[2]!.resolve('shared')
    expect(await Promise.all(solo)).toEqual(['solo-1', 'solo-2'])
    expect(await Promise.all(again)).toEqual(['shared', 'shared', 'shared'])
    expect(table.stats()).toMatchObject({ inflight: 0 })
    await table.close()
  })

  it('refuses a non-boolean with a TypeError', async () => {
    const table = createTable<string | undefined>({ clock: manualClock() })
    expect(() => table.setCoalescing('no' as unknown as boolean)).toThrow(TypeError)
    await table.close()
  })
})
