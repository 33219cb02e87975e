/**
 * A value heavier than `maxSize` is answered and not held in the table's rows (`heavy_skips`), but
 * L2, which has its own bound, takes it: every process then reads it from there, without a load.
 */
import { expect, it } from 'vitest'
import { type Id, createTable, memoryL2 } from '../src/index.js'
import { manualClock } from '../src/testing.js'

it('a value heavier than maxSize is answered, not held in the rows, but written to L2 for every process', async () => {
  const clock = manualClock(0)
  const l2 = memoryL2({ clock })
  const options = { name: 'heavy', ttl: 60_000, jitter: 0, sweepInterval: 1e9, clock, l2, maxSize: 100, sizeOf: (v: string) => v.length }
  const a = createTable<string, Id>(options)
  const b = createTable<string, Id>(options)
  const big = 'x'.repeat(101)
  expect(await a.fetch('big', () => big)).toBe(big)
  expect(a.has('big')).toBe(false)
  expect(a.stats()).toMatchObject({ heavy_skips: 1, weight: 0, size: 0 })
  expect((await l2.get('heavy', 'big'))?.kind).toBe('value')
  let loads = 0
  expect(await b.fetch('big', () => (loads++, 'never'))).toBe(big)
  expect(await a.fetch('big', () => (loads++, 'never'))).toBe(big)
  expect(loads).toBe(0)
  expect(a.stats()).toMatchObject({ l2_hits: 1, heavy_skips: 2 })
  await Promise.all([a.close(), b.close()])
})
