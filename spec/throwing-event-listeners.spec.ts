/**
 * A listener that throws, on any event or on every event (`*`), is reported as a process warning
 * and the table goes on: loads, fills, errors, sweeps and L2 errors still answer their fetches, and
 * the table still closes.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createTable, memoryL2 } from '../src/index.js'
import { chaosL2, manualClock } from '../src/testing.js'
import { latchedLoader, settle } from './support/latch.js'

afterEach(() => {
  vi.restoreAllMocks()
})

describe('a throwing event listener', () => {
  it.each(['load', 'fill', 'error', 'sweep'] as const)('on %s is reported as a warning, and the table goes on', async (type) => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => {})
    const clock = manualClock(0)
    const table = createTable<string | undefined>({ clock, ttl: 100, jitter: 0, sweepInterval: 100 })
    table.events.on(type, () => {
      throw new Error('listener bug')
    })
    table.events.on('*', () => {
      throw new Error('wildcard bug')
    })
    await table.fetch('a', () => 'A')
    await expect(table.fetch('b', () => Promise.reject(new Error('origin down')))).rejects.toThrow('origin down')
    clock.advance(300) // the sweeper reclaims 'a'
    expect(await table.fetch('c', () => 'C')).toBe('C')
    const second = latchedLoader<string>()
    const waiting = table.fetch('d', second.loader)
    await settle()
    second.only().resolve('D')
    expect(await waiting).toBe('D')
    expect(warn).toHaveBeenCalled()
    expect(String(warn.mock.calls[0]![0])).toMatch(/event listener threw/)
    await table.close() // still stops: the owner is alive
    expect(clock.pending()).toBe(0)
  })

  it('on l2_error does not leave the L2 call or the fetch pending', async () => {
    vi.spyOn(process, 'emitWarning').mockImplementation(() => {})
    const clock = manualClock(0)
    const l2 = chaosL2(memoryL2({ clock }), clock)
    const table = createTable<string | undefined>({ clock, l2 })
    table.events.on('l2_error', () => {
      throw new Error('listener bug')
    })
    l2.fail('all', { kind: 'throw' })
    expect(await table.fetch('k', () => 'from origin')).toBe('from origin')
    expect(table.stats().l2_errors).toBeGreaterThanOrEqual(1)
    l2.heal()
    await table.close()
  })
})
