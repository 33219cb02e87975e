/**
 * Durations longer than a Node timer honours (2^31 − 1 ms) are refused where they are given: at
 * construction for the table's own timers, at the call for a fetch's timeout.
 */
import { describe, expect, it } from 'vitest'
import { createTable } from '../src/index.js'
import { manualClock } from '../src/testing.js'

describe('timers longer than Node honours', () => {
  it.each([
    [{ loadTimeout: 2 ** 31 }, /"loadTimeout"/],
    [{ sweepInterval: 2 ** 32 }, /"sweepInterval"/],
  ])('%o is refused at construction', (options, message) => {
    expect(() => createTable(options)).toThrow(RangeError)
    expect(() => createTable(options)).toThrow(message)
  })

  it('a fetch timeout over 2^31 − 1 ms is refused', async () => {
    const table = createTable<string | undefined>({ clock: manualClock() })
    await expect(table.fetch('k', () => 'v', { timeout: 2 ** 31 })).rejects.toThrow(RangeError)
    await table.close()
  })
})
