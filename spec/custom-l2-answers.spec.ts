/**
 * What a custom `L2Store` returns is checked where it enters: a `get` that resolves `null`, returns
 * synchronously, or answers an entry of an unknown kind, a version above `MAX_VERSION` or a lifetime
 * that is not a finite number is a counted L2 failure, and the loader answers; nothing it said is
 * stored or served.
 */
import { describe, expect, it } from 'vitest'
import { createTable } from '../src/index.js'
import type { L2Store } from '../src/store.js'
import { MAX_VERSION } from '../src/limits.js'
import { manualClock } from '../src/testing.js'

type Row = { v: string }

function storeAnswering(get: () => unknown): L2Store {
  return {
    get: get as L2Store['get'],
    set: async () => true,
    nextVersion: async (_t, _i, floor) => floor,
    clear: async () => {},
    close: async () => {},
  }
}

describe('a custom L2 store whose get answers', () => {
  const cases: [string, () => unknown][] = [
    ['null', async () => null],
    ['synchronously (not a promise)', () => ({ kind: 'value', value: { v: 'sync' }, version: 0, ttl: 1_000 })],
    ['an entry of an unknown kind', async () => ({ kind: 'mystery', version: 0, ttl: 1_000 })],
    ['a version of 2^60', async () => ({ kind: 'value', value: { v: 'huge version' }, version: 2 ** 60, ttl: 1_000 })],
    ['a lifetime of Infinity', async () => ({ kind: 'value', value: { v: 'forever' }, version: 0, ttl: Number.POSITIVE_INFINITY })],
    ['a lifetime of NaN', async () => ({ kind: 'value', value: { v: 'nan' }, version: 0, ttl: Number.NaN })],
    ['a string', async () => 'value'],
  ]
  for (const [name, get] of cases) {
    it(`${name}: is a counted L2 failure, and the loader answers`, async () => {
      const clock = manualClock(0)
      const table = createTable<Row>({ ttl: 1_000, jitter: 0, sweepInterval: 1e9, clock, l2: storeAnswering(get) })
      expect(await table.fetch('a', () => ({ v: 'loaded' }))).toEqual({ v: 'loaded' })
      const s = table.stats()
      expect(s.loads).toBe(1)
      expect(s.l2_hits).toBe(0)
      expect(s.l2_errors + s.l2_corrupt).toBe(1)
      clock.advance(2_000)
      expect(table.has('a')).toBe(false) // the row lives the table's ttl, not the store's
      expect(await table.put('a', { v: 'put' })).toMatchObject({ applied: true })
      expect(MAX_VERSION).toBe(2 ** 52)
      await table.close()
    })
  }
})
