/**
 * Answers from a graced value, on every path: stale-while-revalidate answers a graced row at once
 * whatever options the fetch passes (a signal, a deadline), and a caller who joins in the turn a
 * flight failed and gets the fail-safe's graced value is counted in `stale_hits` and told by a
 * `stale` event like every other stale answer.
 */
import { describe, expect, it } from 'vitest'
import { type FetchOptions, createTable } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { latchedLoader, outcome, settle } from './support/latch.js'

type Row = { v: string }

async function gracedTable(options: { staleWhileRevalidate: boolean }) {
  const clock = manualClock(0)
  const table = createTable<Row>({ ttl: 100, jitter: 0, grace: 10_000, sweepInterval: 1e9, clock, ...options })
  await table.fetch('a', () => ({ v: 'old' }))
  clock.advance(150) // past its expiry, within its grace
  return { clock, table }
}

describe('stale-while-revalidate with per-call options', () => {
  const cases: [string, () => FetchOptions][] = [
    ['a deadline', () => ({ timeout: 5_000 })],
    ['a signal', () => ({ signal: new AbortController().signal })],
    ['a soft timeout', () => ({ softTimeout: 1_000 })],
  ]
  for (const [name, options] of cases) {
    it(`answers the graced value at once to a fetch with ${name}, and refreshes in the background`, async () => {
      const { table } = await gracedTable({ staleWhileRevalidate: true })
      const origin = latchedLoader<Row>()
      const answer = outcome(table.fetch('a', origin.loader, options()))
      await settle()
      expect(answer.state).toBe('fulfilled')
      expect(answer.value).toEqual({ v: 'old' })
      expect(origin.calls).toHaveLength(1) // the refresh
      origin.only().resolve({ v: 'new' })
      await settle()
      expect(await table.fetch('a', origin.loader)).toEqual({ v: 'new' })
      expect(table.stats().stale_hits).toBe(1)
      await table.close()
    })
  }
})

describe('stale-while-revalidate and forceRefresh', () => {
  it('does not apply to a forced refresh: it waits for its load and answers the loader’s value, never the graced one', async () => {
    const { table } = await gracedTable({ staleWhileRevalidate: true })
    const stale: unknown[] = []
    table.events.on('stale', (event) => stale.push(event))
    const origin = latchedLoader<Row>()
    const forced = outcome(table.fetch('a', origin.loader, { forceRefresh: true }))
    await settle()
    expect(origin.calls).toHaveLength(1)
    expect(forced.state).toBe('pending') // no graced answer at once
    origin.only().resolve({ v: 'new' })
    await settle()
    expect(forced.state).toBe('fulfilled')
    expect(forced.value).toEqual({ v: 'new' })
    expect(table.stats().stale_hits).toBe(0)
    expect(stale).toEqual([])
    expect(table.peek('a')).toEqual({ v: 'new' })
    await table.close()
  })
})

describe('the fail-safe for a caller joining in the turn its flight failed', () => {
  it('counts the graced answer in stale_hits and emits a stale event', async () => {
    const { table } = await gracedTable({ staleWhileRevalidate: false })
    const stale: number[] = []
    table.events.on('stale', (event) => stale.push(event.callers))
    let fail!: (error: unknown) => void
    const loading = new Promise<Row>((_, reject) => (fail = reject))
    const first = outcome(table.fetch('a', () => loading))
    await settle()
    // Registered after the flight's runner awaits the loader: it runs right after the runner posts the
    // failure, in the same turn, so its miss reaches the owner in the batch that fails the flight.
    let joined!: ReturnType<typeof outcome<Row | undefined>>
    loading.catch(() => (joined = outcome(table.fetch('a', () => ({ v: 'unused' })))))
    fail(new Error('origin down'))
    await settle()
    expect(first.value).toEqual({ v: 'old' })
    expect(joined.value).toEqual({ v: 'old' })
    const stats = table.stats()
    expect(stats.failsafe).toBe(1)
    expect(stats.stale_hits).toBe(2)
    expect(stale.reduce((a, b) => a + b, 0)).toBe(2)
    await table.close()
  })
})
