/**
 * `sizeOf`: "Called once per value stored (fills, puts; a change heard on the bus stores no value:
 * it leaves a tombstone where the table holds the id), never for a negative row or a tombstone".
 * Every path that stores, or stores nothing, is walked and the calls counted.
 */
import { describe, expect, it } from 'vitest'
import { type Id, createTable, localBus, memoryL2 } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { settle } from './support/latch.js'

describe('sizeOf', () => {
  it('is called once for each value a fill or a put stores, and never for a negative row, a tombstone or a change heard', async () => {
    const clock = manualClock()
    const l2 = memoryL2({ clock })
    const bus = localBus()
    const calls: [unknown, Id][] = []
    const sizeOf = (value: unknown, id: Id) => (calls.push([value, id]), 1)
    const shared = { clock, l2, bus, jitter: 0, ttl: 1_000 }
    const table = createTable<string | undefined, Id>({ ...shared, maxSize: 1_000, sizeOf, grace: 1_000, staleWhileRevalidate: true, batchLoader: (ids) => ids.map((id) => `b${id}`) })
    const peer = createTable<string | undefined, Id>(shared)
    const count = async (step: () => Promise<unknown>): Promise<[unknown, Id][]> => {
      calls.length = 0
      await step()
      await settle()
      return [...calls]
    }

    expect(await count(() => table.fetch('a', () => 'A'))).toEqual([['A', 'a']]) // a loader's fill
    expect(await count(() => table.fetch('a', () => 'A'))).toEqual([]) // a hit
    await peer.fetch('shared', () => 'S')
    expect(await count(() => table.fetch('shared', () => 'never'))).toEqual([['S', 'shared']]) // a fill from L2
    expect(await count(() => table.put('p', 'P'))).toEqual([['P', 'p']]) // a put
    expect(await count(() => table.fetch('p', () => 'P2', { forceRefresh: true }))).toEqual([['P2', 'p']]) // a forced refresh
    expect(await count(() => table.getMany(['x', 'y']))).toEqual([
      ['bx', 'x'],
      ['by', 'y'],
    ]) // a batch, one call per id
    expect(await count(() => table.put('n', undefined))).toEqual([]) // a negative row put
    expect(await count(() => table.fetch('m', () => undefined))).toEqual([]) // a negative row filled
    expect(await count(() => table.invalidate('a'))).toEqual([]) // a tombstone
    expect(await count(() => peer.put('p', 'heard'))).toEqual([]) // a change heard on the bus
    expect(table.peek('p')).toBeUndefined() // it left a tombstone where the row was
    clock.advance(1_500) // 'x' is graced: stale-while-revalidate answers and refreshes it
    expect(await count(() => table.fetch('x', () => 'X2'))).toEqual([['X2', 'x']])
    expect(table.peek('x')).toBe('X2')
    await Promise.all([table.close(), peer.close()])
  })
})
