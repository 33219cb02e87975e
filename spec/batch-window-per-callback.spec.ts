/**
 * The batch window is one callback's tick: the reads a callback makes, and those of every promise
 * job after it however many awaits deep, share one batch call; a callback Node runs next (another
 * immediate of the same phase, a timer) gets a call of its own. `fetchMany` with the table's own
 * batch loader shares the call of the table's `get`s, on the base table as on a namespace.
 */
import { describe, expect, it } from 'vitest'
import { type Id, createTable } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { latchedBatchLoader, settle } from './support/latch.js'

describe('the batch window', () => {
  it("is one callback's tick: two immediates queued together make a call each, each holding all its own reads", async () => {
    const origin = latchedBatchLoader<string>()
    const table = createTable<string, Id>({ name: 'w', ttl: 10_000, jitter: 0, sweepInterval: 1e9, clock: manualClock(0), batchLoader: origin.loader })
    const reads: Promise<unknown>[] = []
    const resolver = (ids: Id[]) => () => {
      for (const [depth, id] of ids.entries())
        reads.push(
          (async () => {
            for (let i = 0; i < depth * 2; i++) await Promise.resolve()
            return table.get(id)
          })(),
        )
    }
    await new Promise<void>((resolve) => {
      setImmediate(resolver(['a', 'b', 'c']))
      setImmediate(resolver(['d', 'e']))
      setImmediate(resolve)
    })
    await settle()
    expect(origin.calls.map((call) => call.ids)).toEqual([
      ['a', 'b', 'c'],
      ['d', 'e'],
    ])
    for (const call of origin.calls) call.resolve(call.ids.map(String))
    expect(await Promise.all(reads)).toEqual(['a', 'b', 'c', 'd', 'e'])
    await table.close()
  })

  it("on the base table, fetchMany with the table's own batch loader shares the call of the tick's gets", async () => {
    const origin = latchedBatchLoader<string>()
    const table = createTable<string, Id>({ name: 'w', ttl: 10_000, jitter: 0, sweepInterval: 1e9, clock: manualClock(0), batchLoader: origin.loader })
    const reads = [table.get('a'), table.fetchMany(['b', 'c'], origin.loader), table.getMany(['c', 'd'])]
    await settle()
    expect(origin.only().ids).toEqual(['a', 'b', 'c', 'd'])
    origin.only().resolve(['A', 'B', 'C', 'D'])
    expect(await Promise.all(reads)).toEqual(['A', ['B', 'C'], ['C', 'D']])
    await table.close()
  })
})
