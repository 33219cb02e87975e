/**
 * A batch loader call never holds one id twice. A read made after a change of its id, in the tick
 * the fenced flight of that id still waits in the batch window, goes in the window's call; the
 * fenced flight goes to a call made once that one has ended (answered from its fill in L2, when
 * there is one). Solo flights of one id (the coalescing gate off) are split the same way. The
 * fenced flight's callers get its answer, which is not stored; the newer flight's answer is. A
 * scheduled property checks it over any interleaving of reads and changes.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { type Id, createTable, memoryL2 } from '../src/index.js'
import { manualClock } from '../src/testing.js'

function setup(options: { l2?: boolean; lease?: boolean } = {}) {
  const clock = manualClock(0)
  const calls: Id[][] = []
  const batchLoader = async (ids: readonly Id[]) => {
    calls.push([...ids])
    return ids.map((id) => `${String(id)} of call ${calls.length}`)
  }
  const l2 = options.l2 === true || options.lease === true ? { l2: memoryL2({ clock }) } : {}
  const lease = options.lease === true ? { lease: {} } : {}
  const table = createTable<string, Id>({ name: 'once', clock, jitter: 0, sweepInterval: 1e9, batchLoader, ...l2, ...lease })
  return { calls, table }
}

describe('the batch window after a change in the same tick', () => {
  for (const change of ['invalidate', 'invalidateTags', 'put'] as const) {
    for (const layers of [{}, { l2: true }, { lease: true }]) {
      it(`${change}${layers.l2 ? ' (with L2)' : layers.lease ? ' (with lease)' : ''}: the call holds the id once`, async () => {
        const { calls, table } = setup(layers)
        const first = table.get('a')
        const other = table.get('b')
        if (change === 'invalidate') await table.invalidate('a')
        else if (change === 'invalidateTags') await table.invalidateTags(['t'])
        else await table.put('a', 'put')
        const second = table.get('a')
        await Promise.all([first, other, second])
        for (const ids of calls) expect(new Set(ids).size).toBe(ids.length)
        await table.close()
      })
    }
  }

  it("the fenced flight's callers get its answer, unstored, from a call after the newer read's, whose answer is the row", async () => {
    const { calls, table } = setup()
    const first = table.get('a')
    await table.invalidate('a')
    const second = table.get('a')
    const third = table.get('b')
    expect(await Promise.all([first, second, third])).toEqual(['a of call 2', 'a of call 1', 'b of call 1'])
    expect(calls).toEqual([['a', 'b'], ['a']])
    expect(table.peek('a')).toBe('a of call 1')
    await table.close()
  })

  for (const layers of [{ l2: true }, { lease: true }]) {
    it(`with ${layers.l2 ? 'an L2' : 'lease'}, the fenced flight is answered from the newer read's fill: one batch loader call`, async () => {
      const { calls, table } = setup(layers)
      const first = table.get('a')
      await table.invalidate('a')
      const second = table.get('a')
      expect(await Promise.all([first, second])).toEqual(['a of call 1', 'a of call 1'])
      expect(calls).toEqual([['a']])
      await table.close()
    })
  }

  it('solo flights of one id (the coalescing gate off) go to calls of their own', async () => {
    const { calls, table } = setup()
    table.setCoalescing(false)
    expect(await Promise.all([table.get('a'), table.get('a'), table.get('b')])).toEqual(['a of call 1', 'a of call 2', 'b of call 1'])
    expect(calls).toEqual([['a', 'b'], ['a']])
    await table.close()
  })

  it("solo flights of one id with lease: the later one is answered from the first one's fill", async () => {
    const { calls, table } = setup({ lease: true })
    table.setCoalescing(false)
    expect(await Promise.all([table.get('a'), table.get('a')])).toEqual(['a of call 1', 'a of call 1'])
    expect(calls).toEqual([['a']])
    await table.close()
  })

  type Step = { kind: 'get' | 'invalidate' | 'put'; id: Id } | { kind: 'getMany'; ids: Id[] } | { kind: 'invalidateTags' | 'clear' }
  const ID = fc.constantFrom<Id>('a', 'b', 1)
  const STEP: fc.Arbitrary<Step> = fc.oneof(
    ID.map((id) => ({ kind: 'get' as const, id })),
    fc.array(ID, { minLength: 1, maxLength: 4 }).map((ids) => ({ kind: 'getMany' as const, ids })),
    fc.constantFrom('invalidate' as const, 'put' as const).chain((kind) => ID.map((id) => ({ kind, id }))),
    fc.constantFrom({ kind: 'invalidateTags' as const }, { kind: 'clear' as const }),
  )

  for (const layers of [{}, { l2: true }]) {
    it(`any interleaving of reads and changes${layers.l2 ? ' (with L2)' : ''}: every call holds each id once, every read settles`, async () => {
      await fc.assert(
        fc.asyncProperty(fc.scheduler(), fc.array(STEP, { minLength: 1, maxLength: 10 }), fc.boolean(), async (s, steps, coalescing) => {
          const { calls, table } = setup(layers)
          table.setCoalescing(coalescing)
          const done = steps.map((step) =>
            s.schedule(Promise.resolve(), JSON.stringify(step)).then((): Promise<unknown> => {
              switch (step.kind) {
                case 'get':
                  return table.get(step.id)
                case 'getMany':
                  return table.getMany(step.ids)
                case 'invalidate':
                  return table.invalidate(step.id)
                case 'put':
                  return table.put(step.id, 'put')
                case 'invalidateTags':
                  return table.invalidateTags(['t'])
                case 'clear':
                  return table.clear()
              }
            }),
          )
          await s.waitFor(Promise.all(done))
          for (const ids of calls) expect(new Set(ids).size, JSON.stringify(ids)).toBe(ids.length)
          expect(table.stats().inflight).toBe(0)
          await table.close()
        }),
        { numRuns: 150 },
      )
    })
  }
})
