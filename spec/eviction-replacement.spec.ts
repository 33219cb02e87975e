/**
 * Replacing an id's row on a full table: a value replacing an id's row (a value or a negative row)
 * is never refused while other rows can go (its old value must not stay), however many young
 * tombstones the hands meet first; an id that holds only a tombstone has no old value, and its new
 * value is admitted like a new id's.
 */
import { describe, expect, it } from 'vitest'
import { createTable } from '../src/index.js'
import { manualClock } from '../src/testing.js'

type Weighed = { w: number; tag: string }
const sizeOf = (value: Weighed): number => value.w

describe('replacing a row on a full table', () => {
  it('a heavier value replacing an id’s row is stored past more than 64 young tombstones, evicting another row, with no full_skips', async () => {
    const clock = manualClock(0)
    const table = createTable<Weighed>({ capacity: 1_000, maxSize: 100, sizeOf, ttl: 60_000, jitter: 0, clock })
    for (let i = 0; i < 70; i++) await table.put(`old${i}`, { w: 0, tag: 'filler' })
    for (let i = 0; i < 70; i++) await table.invalidate(`old${i}`) // 70 young tombstones, first in insertion order
    await table.put('x', { w: 50, tag: 'x v1' })
    await table.put('y', { w: 40, tag: 'y v1' })
    expect(table.stats()).toMatchObject({ weight: 90, size: 72 })
    expect((await table.put('y', { w: 60, tag: 'y v2' })).applied).toBe(true)
    expect(table.peek('y')).toEqual({ w: 60, tag: 'y v2' })
    expect(table.peek('x')).toBeUndefined()
    expect(table.stats()).toMatchObject({ weight: 60, size: 71, evictions: 1, full_skips: 0 })
    await table.close()
  })

  it('a value for an id that holds only a tombstone is admitted like a new id’s: it does not evict the popular rows', async () => {
    const clock = manualClock(0)
    const table = createTable<Weighed>({ capacity: 1_000, maxSize: 100, sizeOf, ttl: 60_000, jitter: 0, clock })
    for (const id of ['p1', 'p2', 'p3']) await table.fetch(id, () => ({ w: 25, tag: id }))
    await table.fetch('n', () => ({ w: 25, tag: 'n v1' }))
    await table.invalidate('n') // 'n' holds a tombstone now (weight 0)
    await table.fetch('p4', () => ({ w: 25, tag: 'p4' }))
    for (let round = 0; round < 10; round++) for (const id of ['p1', 'p2', 'p3', 'p4']) await table.fetch(id, () => ({ w: 25, tag: id }), { forceRefresh: true })
    expect(table.stats()).toMatchObject({ weight: 100, size: 5, evictions: 0 })
    expect(await table.fetch('n', () => ({ w: 90, tag: 'n v2' }))).toEqual({ w: 90, tag: 'n v2' })
    await new Promise((resolve) => setImmediate(resolve))
    expect(['p1', 'p2', 'p3', 'p4'].filter((id) => table.has(id))).toEqual(['p1', 'p2', 'p3', 'p4'])
    expect(table.has('n')).toBe(false)
    expect(table.stats()).toMatchObject({ weight: 100, evictions: 0, full_skips: 1 })
    await table.close()
  })
})
