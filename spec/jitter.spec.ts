import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { type Id, createTable, memoryL2 } from '../src/index.js'
import { MAX_TTL } from '../src/limits.js'
import { manualClock } from '../src/testing.js'
import { jitterSpread, jitteredExpiry } from '../src/rows/expiry.js'
import { seeded as seededRandom } from '../examples/support/prng.js'

/** Fills `n` rows at one instant, then reports when each one stops answering hits. */
async function cohortExpiries(n: number, jitter: number): Promise<number[]> {
  const clock = manualClock(0)
  const table = createTable<number | undefined, Id>({ ttl: 1_000, jitter, clock, random: seededRandom(42), sweepInterval: 1e9 })
  await Promise.all(Array.from({ length: n }, (_, i) => table.fetch(i, () => i)))
  const expiry = new Array<number>(n)
  const live = new Set(Array.from({ length: n }, (_, i) => i))
  for (let t = 0; live.size > 0 && t <= 2_000; t++) {
    clock.set(t)
    for (const i of live) {
      let loaded = false
      await table.fetch(i, () => ((loaded = true), i))
      if (loaded) {
        expiry[i] = t
        live.delete(i)
      }
    }
  }
  await table.close()
  return expiry
}

describe('jittered expiry: rows filled together do not expire together', () => {
  it('400 rows filled at one instant with ttl 1000, jitter 0.2 expire across 800–1200, spread ≥ 200 ms, no 10 ms window over 10 %', async () => {
    const expiries = await cohortExpiries(400, 0.2)
    for (const at of expiries) {
      expect(at).toBeGreaterThanOrEqual(800)
      expect(at).toBeLessThanOrEqual(1_200)
    }
    expect(Math.max(...expiries) - Math.min(...expiries)).toBeGreaterThanOrEqual(200)
    const windows = new Map<number, number>()
    for (const at of expiries) windows.set(Math.floor(at / 10), (windows.get(Math.floor(at / 10)) ?? 0) + 1)
    expect(Math.max(...windows.values())).toBeLessThanOrEqual(40)
  })

  it('with jitter 0 the whole cohort expires at one instant (the re-herd the jitter prevents)', async () => {
    const expiries = await cohortExpiries(400, 0)
    expect(new Set(expiries)).toEqual(new Set([1_000]))
  })

  it('property: every expiry is now + ttl + an integer offset within ±trunc(ttl·jitter), for any valid ttl and jitter', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 ** 40 }),
        fc.integer({ min: 1, max: 1e9 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (now, ttl, jitter, draw) => {
          const spread = jitterSpread(ttl, jitter)
          const offset = jitteredExpiry(now, ttl, spread, () => draw, Number.POSITIVE_INFINITY) - now - ttl
          expect(Number.isInteger(offset)).toBe(true)
          expect(Math.abs(offset)).toBeLessThanOrEqual(spread)
        },
      ),
    )
  })

  it('property: with a fractional ttl the expiry still lies in the band', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 1e-3, max: 1e9, noNaN: true }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (ttl, jitter, draw) => {
          const spread = jitterSpread(ttl, jitter)
          const at = jitteredExpiry(0, ttl, spread, () => draw, Number.POSITIVE_INFINITY)
          expect(at).toBeGreaterThanOrEqual(ttl - spread)
          expect(at).toBeLessThanOrEqual(ttl + spread)
        },
      ),
    )
  })

  it('every offset in [-spread, +spread] is reachable, uniformly', () => {
    const counts = new Map<number, number>()
    const random = seededRandom(7)
    for (let i = 0; i < 11_000; i++) {
      const offset = jitteredExpiry(0, 100, 5, random, Number.POSITIVE_INFINITY) - 100
      counts.set(offset, (counts.get(offset) ?? 0) + 1)
    }
    expect([...counts.keys()].sort((a, b) => a - b)).toEqual([-5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5])
    for (const count of counts.values()) expect(count).toBeGreaterThan(800) // 1000 expected each
  })

  it('jitter applies to a loader’s setTtl and to a put’s ttl: ttl ± trunc(ms·jitter) of the lifetime given', async () => {
    const clock = manualClock(0)
    const table = createTable<string | undefined, Id>({ ttl: 100_000, jitter: 0.5, clock, random: () => 0, sweepInterval: 1e9 })
    await table.fetch('loaded', (_, { setTtl }) => (setTtl(1_000), 'v'))
    await table.put('put', 'v', { ttl: 1_000 })
    clock.set(499)
    expect([table.has('loaded'), table.has('put')]).toEqual([true, true])
    clock.set(500) // random() = 0 draws the earliest expiry: 1000 − trunc(1000 × 0.5)
    expect([table.has('loaded'), table.has('put')]).toEqual([false, false])
    await table.close()
  })

  it('no row lives longer than a year, jittered up or not, so another process reads a year-long entry from L2 as a hit', async () => {
    const clock = manualClock(0)
    const l2 = memoryL2({ clock })
    const options = { name: 'year', ttl: MAX_TTL, jitter: 0.1, random: () => 0.999, clock, l2, sweepInterval: 1e9 }
    const [a, b] = [createTable<string>(options), createTable<string>(options)]
    await a.fetch('k', () => 'from A')
    await a.put('p', 'put by A', { ttl: MAX_TTL })
    expect(await l2.get('year', 'k')).toMatchObject({ ttl: MAX_TTL })
    expect([await b.fetch('k', () => 'loaded by B'), await b.fetch('p', () => 'loaded by B')]).toEqual(['from A', 'put by A'])
    expect(b.stats()).toMatchObject({ l2_hits: 2, loads: 0, l2_errors: 0 })
    clock.set(MAX_TTL - 1)
    expect(a.has('k')).toBe(true)
    clock.set(MAX_TTL)
    expect(a.has('k')).toBe(false)
    await Promise.all([a.close(), b.close()])
  })

  it('negative rows use negativeTtl with the same jitter rule', async () => {
    const clock = manualClock(0)
    const table = createTable<string | undefined, Id>({ ttl: 10_000, negativeTtl: 1_000, jitter: 0.2, clock, random: () => 0, sweepInterval: 1e9 })
    expect(await table.fetch('gone', () => undefined)).toBeUndefined()
    clock.set(799)
    let loads = 0
    await table.fetch('gone', () => (loads++, undefined))
    expect(loads).toBe(0)
    clock.set(800) // random() = 0 draws the earliest expiry: 1000 − 200
    await table.fetch('gone', () => (loads++, undefined))
    expect(loads).toBe(1)
    await table.close()
  })
})
