/**
 * The fail-safe's back-off on a table bounded by weight (`maxSize`): the graced value another
 * process left in L2 is stored whatever admission says, evicting as many rows as it takes, and its
 * row holds the origin off for `graceBackoff`; the rows held never weigh more than `maxSize`. A
 * graced value heavier than `maxSize` is answered, but has no row to hold the origin off with: each
 * flight of the id asks the origin once.
 */
import { describe, expect, it } from 'vitest'
import { type Id, createTable, memoryL2 } from '../src/index.js'
import { manualClock } from '../src/testing.js'

const TTL = 1_000
const GRACE = 10_000

function twoProcesses() {
  const clock = manualClock(0)
  const l2 = memoryL2({ clock })
  const options = { name: 'shared', ttl: TTL, jitter: 0, grace: GRACE, graceBackoff: 5_000, sweepInterval: 1e9, clock, l2 }
  const writer = createTable<string, Id>(options)
  const weighed = createTable<string, Id>({ ...options, maxSize: 100, sizeOf: (value: string) => value.length })
  return { clock, writer, weighed }
}

describe("the fail-safe's back-off on a table bounded by weight", () => {
  it('stores the graced value from L2 on a table full by weight whatever admission says, and holds the origin off', async () => {
    const { clock, writer, weighed } = twoProcesses()
    expect(await writer.fetch('k', () => 'k'.repeat(60))).toBe('k'.repeat(60))
    for (let round = 0; round < 5; round++) for (let i = 0; i < 5; i++) await weighed.fetch(`hot${i}`, () => 'h'.repeat(20), { forceRefresh: round > 0 })
    expect(weighed.stats().weight).toBe(100)
    clock.set(TTL + 2_000) // k's entry is past its ttl, within its grace in L2
    let calls = 0
    const failing = () => (calls++, Promise.reject(new Error('origin down')))
    for (let i = 0; i < 4; i++) {
      expect(await weighed.fetch('k', failing)).toBe('k'.repeat(60))
      clock.advance(100) // within graceBackoff
    }
    expect(calls).toBe(1)
    expect(weighed.stats().weight).toBeLessThanOrEqual(100)
    expect(weighed.stats()).toMatchObject({ failsafe: 1, full_skips: 0, stale_hits: 4 })
    await Promise.all([writer.close(), weighed.close()])
  })

  it('answers a graced value heavier than maxSize without storing it: each flight asks the origin once, as there is no row to hold it off', async () => {
    const { clock, writer, weighed } = twoProcesses()
    const heavy = 'k'.repeat(160)
    expect(await writer.fetch('k', () => heavy)).toBe(heavy)
    clock.set(TTL + 2_000) // k's entry is past its ttl, within its grace in L2
    let calls = 0
    const failing = () => (calls++, Promise.reject(new Error('origin down')))
    for (let i = 0; i < 3; i++) {
      const herd = await Promise.all([weighed.fetch('k', failing), weighed.fetch('k', failing)])
      expect(herd).toEqual([heavy, heavy])
      clock.advance(100) // within graceBackoff
    }
    expect(calls).toBe(3) // once a flight: a herd still asks once
    expect(weighed.stats()).toMatchObject({ weight: 0, size: 0, failsafe: 3, heavy_skips: 3, stale_hits: 6 })
    await Promise.all([writer.close(), weighed.close()])
  })
})
