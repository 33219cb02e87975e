/**
 * A flight callers were told goes on (answered early by a soft timeout or stale-while-revalidate, or
 * left by their own timeout) fills the row it was promised to: a later caller who joins it and
 * leaves by its signal leaves alone, and the flight is not released. Only a flight whose every
 * caller left by cancellation is.
 */ import { describe, expect, it } from 'vitest'
import { type FetchOptions, type Loader, type Table, createTable } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { advanceSettled, latchedLoader, outcome, settle } from './support/latch.js'

/** A caller who joins `k`'s flight (with `options`), then leaves it by its signal; it must be refused with the signal's reason. */
async function joinAndLeave(table: Table<string | undefined>, loader: Loader<string | undefined>, options: FetchOptions = {}): Promise<void> {
  const leaving = new AbortController()
  const late = outcome(table.fetch('k', loader, { ...options, signal: leaving.signal }))
  await settle()
  leaving.abort(new Error('client went away'))
  await settle()
  expect(late.state).toBe('rejected')
}

/** A table whose row of `k` (loaded once) has expired and is within its grace, with a table soft timeout of 50 ms armed for the next flight. */
async function gracedRow() {
  const clock = manualClock(0)
  const origin = latchedLoader<string>()
  const table = createTable<string | undefined>({ clock, ttl: 100, grace: 10_000, softTimeout: 50, jitter: 0, sweepInterval: 1e9 })
  const first = outcome(table.fetch('k', origin.loader))
  await settle()
  origin.calls[0]!.resolve('v0')
  await settle()
  expect(first.value).toBe('v0')
  await advanceSettled(clock, 150)
  return { clock, origin, table }
}

describe('a late joiner that cancels', () => {
  it('does not abandon a flight whose callers the table soft timeout answered', async () => {
    const clock = manualClock(0)
    const origin = latchedLoader<string>()
    const table = createTable<string | undefined>({ clock, ttl: 100, jitter: 0, grace: 10_000, softTimeout: 10, sweepInterval: 1e9 })
    await table.put('k', 'v0')
    clock.set(150) // k is graced
    const plain = outcome(table.fetch('k', origin.loader))
    await settle()
    await advanceSettled(clock, 10)
    expect(plain).toMatchObject({ state: 'fulfilled', value: 'v0' }) // soft timeout: the flight goes on to fill the row

    await joinAndLeave(table, origin.loader, { softTimeout: 500 })
    expect(origin.only().context.signal.aborted).toBe(false)
    expect(table.stats().abandoned).toBe(0)
    origin.only().resolve('v1')
    await settle()
    expect(table.peek('k')).toBe('v1')
    await table.close()
  })

  it('does not abandon a stale-while-revalidate refresh it joined', async () => {
    const clock = manualClock(0)
    const origin = latchedLoader<string>()
    const table = createTable<string | undefined>({ clock, ttl: 100, jitter: 0, grace: 50, staleWhileRevalidate: true, loadTimeout: 1_000, sweepInterval: 1e9 })
    await table.put('k', 'v0')
    clock.set(120) // graced: answered stale, one refresh starts
    expect(await table.fetch('k', origin.loader)).toBe('v0')
    await settle()
    expect(origin.calls).toHaveLength(1)
    clock.set(200) // past the grace: a read now joins the refresh
    await joinAndLeave(table, origin.loader)
    expect(origin.only().context.signal.aborted).toBe(false)
    origin.only().resolve('v1')
    await settle()
    expect(table.peek('k')).toBe('v1')
    await table.close()
  })

  it('does not abandon a flight an earlier caller left by its timeout', async () => {
    const clock = manualClock(0)
    const origin = latchedLoader<string>()
    const table = createTable<string | undefined>({ clock, ttl: 1_000, loadTimeout: 5_000, sweepInterval: 1e9 })
    const patient = outcome(table.fetch('k', origin.loader, { timeout: 10 }))
    await settle()
    await advanceSettled(clock, 10)
    expect(patient.state).toBe('rejected') // its own timeout: the flight goes on and fills
    await joinAndLeave(table, origin.loader)
    expect(origin.only().context.signal.aborted).toBe(false)
    expect(table.stats()).toMatchObject({ abandoned: 0, timeouts: 1, cancelled: 1 })
    origin.only().resolve('v1')
    await settle()
    expect(table.peek('k')).toBe('v1')
    await table.close()
  })

  it('still releases a flight whose every caller left by cancellation', async () => {
    const origin = latchedLoader<string>()
    const table = createTable<string | undefined>({ clock: manualClock(0) })
    const leaving = new AbortController()
    const reads = [outcome(table.fetch('k', origin.loader, { signal: leaving.signal })), outcome(table.fetch('k', origin.loader, { signal: leaving.signal }))]
    await settle()
    leaving.abort(new Error('client went away'))
    await settle()
    expect(reads.map((read) => read.state)).toEqual(['rejected', 'rejected'])
    expect(origin.only().context.signal.aborted).toBe(true)
    expect(table.stats()).toMatchObject({ abandoned: 1, inflight: 0 })
    await table.close()
  })

  it('a table soft timeout that answered nobody promised nothing: a forced refresh whose only caller then cancels is released', async () => {
    const { clock, origin, table } = await gracedRow()

    const leaving = new AbortController()
    const forced = outcome(table.fetch('k', origin.loader, { forceRefresh: true, signal: leaving.signal }))
    await settle()
    expect(origin.calls).toHaveLength(2)
    await advanceSettled(clock, 60) // table soft timeout: answerEarly answers nobody (forced callers never take grace)
    expect(forced.state).toBe('pending')
    leaving.abort(new Error('client went away')) // its only caller leaves by cancellation: nobody was told it goes on
    await settle()
    expect(forced.state).toBe('rejected')
    expect(table.stats().abandoned).toBe(1)
    expect(origin.calls[1]!.context.signal.aborted).toBe(true)
    origin.calls[1]!.resolve('late')
    await settle()
    await table.close()
  })

  it('nor does it for a waiter with a soft timeout of its own: when it cancels, the flight is released', async () => {
    const { clock, origin, table } = await gracedRow()
    const leaving = new AbortController()
    const read = outcome(table.fetch('k', origin.loader, { softTimeout: 5_000, signal: leaving.signal }))
    await settle()
    await advanceSettled(clock, 60) // the table's soft timeout passes; the waiter keeps its own
    expect(read.state).toBe('pending')
    leaving.abort(new Error('client went away'))
    await settle()
    expect(read.state).toBe('rejected')
    expect(table.stats().abandoned).toBe(1)
    expect(origin.calls[1]!.context.signal.aborted).toBe(true)
    origin.calls[1]!.resolve('late')
    await settle()
    await table.close()
  })
})
