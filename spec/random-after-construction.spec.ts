/**
 * A `random` that goes bad after construction (throws, or answers outside [0, 1)) never fails a
 * fill or a put: the row takes the middle of its expiry band.
 */
import { describe, expect, it } from 'vitest'
import { createTable } from '../src/index.js'
import { manualClock } from '../src/testing.js'

describe('a random source that throws after construction', () => {
  it('fills and puts take the middle of the band', async () => {
    let calls = 0
    const clock = manualClock(0)
    const random = () => {
      if (calls++ > 0) throw new Error('entropy ran out')
      return 0.5
    }
    const table = createTable<string>({ ttl: 1_000, jitter: 0.2, sweepInterval: 1e9, clock, random })
    expect(await table.fetch('a', () => 'loaded')).toBe('loaded')
    expect(await table.put('b', 'put')).toMatchObject({ applied: true })
    clock.advance(999)
    expect(table.has('a')).toBe(true)
    expect(table.has('b')).toBe(true)
    clock.advance(1)
    expect(table.has('a')).toBe(false)
    await table.close()
  })
})
