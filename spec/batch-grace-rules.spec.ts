/**
 * Grace works per id in a batch read as for fetch: stale-while-revalidate answers a batch read of
 * graced ids at once and refreshes them in one batch call; a soft timeout answers the graced ids of
 * a slow batch and the call goes on to fill them; the fail-safe's back-off answers a batch read
 * within it without asking the origin.
 */
import { describe, expect, it } from 'vitest'
import { type Id, createTable } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { latchedBatchLoader, outcome, settle } from './support/latch.js'

const TTL = 1_000
const GRACE = 10_000

async function graced(options: Record<string, unknown>) {
  const clock = manualClock(0)
  const origin = latchedBatchLoader<string>()
  const table = createTable<string, Id>({ name: 'bg', ttl: TTL, jitter: 0, grace: GRACE, sweepInterval: 1e9, clock, batchLoader: origin.loader, ...options })
  const first = table.getMany(['a', 'b'])
  await settle()
  origin.only().resolve(['a1', 'b1'])
  expect(await first).toEqual(['a1', 'b1'])
  clock.set(TTL + 500)
  return { clock, table, origin }
}

describe('grace in a batch read', () => {
  it('stale-while-revalidate: getMany of graced ids answers at once, and one batch call refreshes them', async () => {
    const { table, origin } = await graced({ staleWhileRevalidate: true })
    const readers = [outcome(table.getMany(['a', 'b'])), outcome(table.get('a')), outcome(table.get('b'))]
    await settle()
    expect(readers.map((r) => r.value)).toEqual([['a1', 'b1'], 'a1', 'b1'])
    expect(origin.calls.map((call) => call.ids)).toEqual([
      ['a', 'b'],
      ['a', 'b'],
    ])
    origin.calls[1]!.resolve(['a2', 'b2'])
    await settle()
    expect(await table.getMany(['a', 'b'])).toEqual(['a2', 'b2'])
    expect(origin.calls).toHaveLength(2)
    await table.close()
  })

  it('a soft timeout answers the graced ids of a slow batch; the call goes on and fills', async () => {
    const { clock, table, origin } = await graced({ softTimeout: 100 })
    const page = outcome(table.getMany(['a', 'b']))
    await settle()
    clock.advance(99)
    await settle()
    expect(page.state).toBe('pending')
    clock.advance(1)
    await settle()
    expect(page).toMatchObject({ state: 'fulfilled', value: ['a1', 'b1'] })
    origin.calls[1]!.resolve(['a2', 'b2'])
    await settle()
    expect([table.peek('a'), table.peek('b')]).toEqual(['a2', 'b2'])
    await table.close()
  })

  it('the fail-safe answers a failed batch with the graced values, and its back-off answers the next batch read without a call', async () => {
    const { clock, table, origin } = await graced({ graceBackoff: 2_000 })
    const page = table.getMany(['a', 'b'])
    await settle()
    origin.calls[1]!.reject(new Error('origin down'))
    expect(await page).toEqual(['a1', 'b1'])
    clock.advance(1_000)
    expect(await table.getMany(['a', 'b'])).toEqual(['a1', 'b1'])
    expect(origin.calls).toHaveLength(2)
    expect(table.stats()).toMatchObject({ failsafe: 2, load_errors: 2 })
    await table.close()
  })
})
