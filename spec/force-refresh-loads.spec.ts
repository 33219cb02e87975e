/**
 * `forceRefresh` is answered by the loader, never by what it was asked to replace: not by an
 * unforced flight it met in the same turn (which L2's entry answers), not by a soft timeout with
 * the live row itself, and not by the fail-safe when its loader fails (the caller gets the error).
 * Its answer replaces what it was asked to replace: with coalescing off, an older flight's answer
 * landing later is not stored over it, and an answer not to be cached leaves a tombstone in L2.
 */
import { describe, expect, it } from 'vitest'
import { createTable, memoryL2 } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { advanceSettled, latchedLoader, outcome, settle } from './support/latch.js'

type Row = { v: string }

describe('a forced refresh', () => {
  it('in the same turn as an unforced miss answered by L2: still calls the loader', async () => {
    const clock = manualClock(0)
    const store = memoryL2({ clock })
    await store.set('forced', 'a', { kind: 'value', value: { v: 'in L2' }, version: 0, ttl: 60_000 })
    const table = createTable<Row>({ name: 'forced', jitter: 0, sweepInterval: 1e9, clock, l2: store })
    const origin = latchedLoader<Row>()
    const plain = outcome(table.fetch('a', origin.loader))
    const forced = outcome(table.fetch('a', origin.loader, { forceRefresh: true }))
    for (let i = 0; i < 5; i++) await settle()
    expect(plain.value).toEqual({ v: 'in L2' })
    expect(origin.calls).toHaveLength(1)
    origin.only().resolve({ v: 'from the origin' })
    await settle()
    expect(forced.value).toEqual({ v: 'from the origin' })
    await table.close()
  })

  it('with a soft timeout: is never answered with the live row it was asked to replace', async () => {
    const clock = manualClock(0)
    const table = createTable<Row>({ ttl: 1_000, jitter: 0, grace: 10_000, softTimeout: 10, sweepInterval: 1e9, clock })
    await table.fetch('a', () => ({ v: 'live' }))
    const origin = latchedLoader<Row>()
    const forced = outcome(table.fetch('a', origin.loader, { forceRefresh: true }))
    const forcedSoft = outcome(table.fetch('b', origin.loader, { forceRefresh: true, softTimeout: 10 }))
    await settle()
    await advanceSettled(clock, 50)
    expect(forced.state).toBe('pending')
    expect(forcedSoft.state).toBe('pending')
    for (const call of origin.calls) call.resolve({ v: 'refreshed' })
    await settle()
    expect(forced.value).toEqual({ v: 'refreshed' })
    await table.close()
  })

  it('whose loader fails: gets the error, not the row it was asked to replace (the fail-safe answers only unforced callers)', async () => {
    const clock = manualClock(0)
    const table = createTable<Row>({ ttl: 1_000, jitter: 0, grace: 10_000, sweepInterval: 1e9, clock })
    await table.fetch('a', () => ({ v: 'live' }))
    const failure = new Error('origin down')
    await expect(table.fetch('a', () => Promise.reject(failure), { forceRefresh: true })).rejects.toBe(failure)
    expect(table.peek('a')).toEqual({ v: 'live' }) // the row stays: nothing replaced it
    await table.close()
  })

  it('in a process that never read the id: its answer replaces the entry another process wrote at a real version, in L2 and in its own L1', async () => {
    const clock = manualClock(0)
    const l2 = memoryL2({ clock })
    const options = { name: 'forced', jitter: 0, sweepInterval: 1e9, clock, l2 }
    const [writer, refresher, reader] = [createTable<Row>(options), createTable<Row>(options), createTable<Row>(options)]
    expect((await writer.put('a', { v: 'old' })).l2).toBe('written')
    expect(await refresher.fetch('a', () => ({ v: 'new' }), { forceRefresh: true })).toEqual({ v: 'new' })
    expect(refresher.has('a')).toBe(true)
    expect(await refresher.fetch('a', () => ({ v: 'never' }))).toEqual({ v: 'new' })
    expect(await reader.fetch('a', () => ({ v: 'never' }))).toEqual({ v: 'new' })
    expect(refresher.stats()).toMatchObject({ fenced: 0, fills: 1 })
    await Promise.all([writer.close(), refresher.close(), reader.close()])
  })

  it('with coalescing off: supersedes the flight of its id in progress, whose older answer, landing later, is not stored', async () => {
    const table = createTable<Row>({ jitter: 0, sweepInterval: 1e9, clock: manualClock(0) })
    table.setCoalescing(false)
    const [plain, fresh] = [latchedLoader<Row>(), latchedLoader<Row>()]
    const before = outcome(table.fetch('a', plain.loader))
    await settle()
    const forced = outcome(table.fetch('a', fresh.loader, { forceRefresh: true }))
    await settle()
    fresh.only().resolve({ v: 'forced' })
    await settle()
    plain.only().resolve({ v: 'read before' })
    await settle()
    expect([before.value, forced.value]).toEqual([{ v: 'read before' }, { v: 'forced' }])
    expect(table.peek('a')).toEqual({ v: 'forced' })
    expect(table.stats()).toMatchObject({ fenced: 1, fills: 1 })
    await table.close()
  })

  it('whose answer is not to be cached (negativeTtl 0, setTtl(0)): the entry it replaces in L2 gives way to a tombstone', async () => {
    for (const answer of ['absent', 'setTtl(0)'] as const) {
      const clock = manualClock(0)
      const l2 = memoryL2({ clock })
      const table = createTable<Row | undefined>({ name: 'forced', negativeTtl: 0, jitter: 0, sweepInterval: 1e9, clock, l2 })
      await table.fetch('a', () => ({ v: 'old' }))
      const refreshed = await table.fetch('a', (_id, context) => (answer === 'absent' ? undefined : (context.setTtl(0), { v: 'uncached' })), { forceRefresh: true })
      expect(refreshed).toEqual(answer === 'absent' ? undefined : { v: 'uncached' })
      await settle()
      expect(await l2.get('forced', 'a')).toMatchObject({ kind: 'tombstone' })
      expect(await table.fetch('a', () => ({ v: 'reloaded' }))).toEqual({ v: 'reloaded' })
      await table.close()
    }
  })
})
