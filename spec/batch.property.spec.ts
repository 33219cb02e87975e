/**
 * The coalescing law extended to batches, over every interleaving fast-check's scheduler can
 * produce: whatever mix of `fetch`, `fetchMany` and `get` (through a table's batch loader) reads a
 * few ids, each id has at most one load at the origin at a time, and every reader of an id gets the
 * one answer of that id's flight (the same object). Rows never expire within a run, so each id is
 * loaded exactly once. Every read call is a scheduled task (callers race) and every origin answer a
 * scheduled release (loads finish in any order); the counter laws hold once all has settled.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { type Id, createTable } from '../src/index.js'
import { manualClock } from '../src/testing.js'

type Read = { kind: 'fetch'; id: Id } | { kind: 'fetchMany'; ids: Id[] } | { kind: 'get'; id: Id } | { kind: 'getMany'; ids: Id[] }

const ID = fc.constantFrom<Id>('a', 'b', 'c', 1)
const READ: fc.Arbitrary<Read> = fc.oneof(
  ID.map((id) => ({ kind: 'fetch' as const, id })),
  ID.map((id) => ({ kind: 'get' as const, id })),
  fc.array(ID, { minLength: 1, maxLength: 5 }).map((ids) => ({ kind: 'fetchMany' as const, ids })),
  fc.array(ID, { minLength: 1, maxLength: 5 }).map((ids) => ({ kind: 'getMany' as const, ids })),
)

/** A token per id per load: identity tells loads apart. */
type Token = { id: Id; load: number }

describe('the coalescing law across single and batch reads', () => {
  it('each id is loaded once, never twice at a time, and every reader of it gets that load’s answer', async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.array(READ, { minLength: 1, maxLength: 12 }), fc.integer({ min: 1, max: 3 }), async (s, reads, maxBatchSize) => {
        let loads = 0
        const atOrigin = new Map<Id, number>() // loads of an id in progress at the origin
        const tokens = new Map<Id, Token[]>()
        let overlap = false
        /** The origin: answers each asked id with a new token, once the scheduler releases it. */
        const answer = async (ids: Id[]): Promise<Token[]> => {
          const made = ids.map((id) => {
            if ((atOrigin.get(id) ?? 0) > 0) overlap = true
            atOrigin.set(id, (atOrigin.get(id) ?? 0) + 1)
            const token = { id, load: loads++ }
            tokens.set(id, [...(tokens.get(id) ?? []), token])
            return token
          })
          await s.schedule(Promise.resolve(), `origin answers ${JSON.stringify(ids)}`)
          for (const id of ids) atOrigin.set(id, atOrigin.get(id)! - 1)
          return made
        }
        const batchLoader = (ids: Id[]) => answer(ids)
        const table = createTable<Token, Id>({ name: 'law', ttl: 1e9, jitter: 0, sweepInterval: 1e9, clock: manualClock(0), batchLoader, maxBatchSize })
        const results: { ids: Id[]; answer: Promise<(Token | undefined)[]> }[] = []
        for (const read of reads) {
          const ids = read.kind === 'fetch' || read.kind === 'get' ? [read.id] : read.ids
          const call = s.schedule(Promise.resolve(), `${read.kind}(${JSON.stringify(ids)})`).then(() => {
            switch (read.kind) {
              case 'fetch':
                return table.fetch(read.id, async (id) => (await answer([id]))[0]!).then((v) => [v])
              case 'get':
                return table.get(read.id).then((v) => [v])
              case 'fetchMany':
                return table.fetchMany(read.ids, batchLoader)
              case 'getMany':
                return table.getMany(read.ids)
            }
          })
          results.push({ ids, answer: call })
        }
        // A batch call goes out once its tick's promise jobs have run: waitFor releases the tasks scheduled after that too.
        const answers = await s.waitFor(Promise.all(results.map((r) => r.answer)))
        expect(overlap).toBe(false)
        for (const [id, made] of tokens) expect(made, `loads of ${String(id)}`).toHaveLength(1)
        results.forEach((r, i) => r.ids.forEach((id, j) => expect(answers[i]![j]).toBe(tokens.get(id)![0])))
        const stats = table.stats()
        expect(stats.misses).toBe(stats.flights + stats.coalesced)
        expect(stats.loads).toBe(tokens.size)
        expect(stats.batch_ids).toBeLessThanOrEqual(stats.loads)
        expect(stats.batch_ids).toBeLessThanOrEqual(stats.batch_loads * maxBatchSize)
        expect(stats.inflight).toBe(0)
        await table.close()
      }),
      { numRuns: 200 },
    )
  })
})
