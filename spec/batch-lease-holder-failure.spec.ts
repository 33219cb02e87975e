/**
 * A batch that holds its ids' leases and fails (the call rejects, or an Error in an id's place): the
 * waiters of those leases in other processes fail with it (LeaseHolderFailedError), with no origin
 * call of their own; with grace they answer their graced value and hold the origin off.
 */
import { expect, it } from 'vitest'
import { type Id, type Table, createTable, LeaseHolderFailedError, localBus, memoryL2 } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { latchedBatchLoader, latchedLoader, outcome, settle } from './support/latch.js'

async function quiet() {
  for (let i = 0; i < 8; i++) await settle()
}

function processes(n: number, extra: Record<string, unknown> = {}) {
  const clock = manualClock(0)
  const store = memoryL2({ clock })
  const bus = localBus()
  const tables = Array.from({ length: n }, () => createTable<string, Id>({ name: 'b', ttl: 1_000, jitter: 0, sweepInterval: 1e9, loadTimeout: 5_000, clock, l2: store, bus, lease: true, ...extra }))
  return {
    clock,
    tables,
    close: async () => {
      await Promise.all(tables.map((t) => t.close()))
      await store.close()
      await bus.close()
    },
  }
}

for (const how of ['rejects', 'an Error in its place'] as const) {
  it(`a batch lease holder whose batch ${how}: the waiter in another process fails with LeaseHolderFailedError, one origin call`, async () => {
    const { tables, close } = processes(2)
    const [a, b] = tables as [Table<string, Id>, Table<string, Id>]
    const batch = latchedBatchLoader<string>()
    const fromA = outcome(a.fetchMany(['k', 'j'], batch.loader))
    await quiet()
    const single = latchedLoader<string>()
    const fromB = outcome(b.fetch('k', single.loader))
    await quiet()
    expect(single.calls).toHaveLength(0)
    if (how === 'rejects') batch.only().reject(new Error('origin down'))
    else batch.only().resolve([new Error('k is broken'), 'J'])
    await quiet()
    expect(fromA.state).toBe('rejected')
    expect(fromB.state).toBe('rejected')
    expect(fromB.error).toBeInstanceOf(LeaseHolderFailedError)
    expect(single.calls).toHaveLength(0)
    await close()
  })
}

it('with grace, a batch lease holder that fails: the waiter answers its graced value, and backs off', async () => {
  const { clock, tables, close } = processes(2, { grace: 10_000, graceBackoff: 500 })
  const [a, b] = tables as [Table<string, Id>, Table<string, Id>]
  await a.fetch('k', () => 'old')
  await b.fetch('k', () => 'never')
  clock.advance(1_001)
  await quiet()
  const batch = latchedBatchLoader<string>()
  const fromA = outcome(a.fetchMany(['k'], batch.loader))
  await quiet()
  const single = latchedLoader<string>()
  const fromB = outcome(b.fetch('k', single.loader))
  await quiet()
  batch.only().reject(new Error('origin down'))
  await quiet()
  expect(fromA.value).toEqual(['old'])
  expect(fromB.value).toBe('old')
  expect(await b.fetch('k', single.loader)).toBe('old')
  expect(single.calls).toHaveLength(0)
  await close()
})
