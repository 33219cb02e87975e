/**
 * A forced refresh through a batch loader replaces the row in every layer, as one through a loader
 * does: in a process that never read the id, its answer carries the version of the entry it
 * replaces, so L2 takes it and its own L1 keeps it.
 */
import { describe, expect, it } from 'vitest'
import { type Id, createTable, memoryL2 } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { settle } from './support/latch.js'

type Row = { v: string }

describe('a forced refresh through a batch loader', () => {
  it('in a process that never read the id: its answer replaces the entry another process wrote at a real version, in L2 and in its own L1', async () => {
    const clock = manualClock(0)
    const l2 = memoryL2({ clock })
    let calls = 0
    const batchLoader = async (ids: readonly Id[]) => {
      calls++
      return ids.map(() => ({ v: 'new' }))
    }
    const options = { name: 'forced', jitter: 0, sweepInterval: 1e9, clock, l2, batchLoader }
    const [writer, refresher, reader] = [createTable<Row>(options), createTable<Row>(options), createTable<Row>(options)]
    expect((await writer.put('a', { v: 'old' })).l2).toBe('written')
    expect(await refresher.getMany(['a'], { forceRefresh: true })).toEqual([{ v: 'new' }])
    for (let i = 0; i < 5; i++) await settle()
    expect(calls).toBe(1)
    expect(refresher.has('a')).toBe(true)
    expect(await reader.get('a')).toEqual({ v: 'new' })
    expect(await l2.get('forced', 'a')).toMatchObject({ kind: 'value', value: { v: 'new' } })
    await Promise.all([writer.close(), refresher.close(), reader.close()])
  })

  it('with get(id, { forceRefresh }) on a batch-loader table: the same', async () => {
    const clock = manualClock(0)
    const l2 = memoryL2({ clock })
    const batchLoader = async (ids: readonly Id[]) => ids.map(() => ({ v: 'new' }))
    const options = { name: 'forced', jitter: 0, sweepInterval: 1e9, clock, l2, batchLoader }
    const [writer, refresher] = [createTable<Row>(options), createTable<Row>(options)]
    await writer.put('a', { v: 'old' })
    expect(await refresher.get('a', { forceRefresh: true })).toEqual({ v: 'new' })
    for (let i = 0; i < 5; i++) await settle()
    expect(await l2.get('forced', 'a')).toMatchObject({ kind: 'value', value: { v: 'new' } })
    expect(refresher.has('a')).toBe(true)
    await Promise.all([writer.close(), refresher.close()])
  })
})
