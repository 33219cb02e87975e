/**
 * A forced refresh supersedes the id's flight: that flight still answers the reads that joined it
 * before, but a read made after the refresh, even in the same turn, joins the refresh and gets its
 * loader's answer, as a read made a turn later does.
 */
import { describe, expect, it } from 'vitest'
import { type Id, createTable } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { latchedBatchLoader, latchedLoader, outcome, settle } from './support/latch.js'

/** A table whose id `k` has an unforced flight in progress, its loader held. */
async function withFlight() {
  const table = createTable<string, Id>({ name: 'forced-turn', jitter: 0, sweepInterval: 1e9, clock: manualClock(0) })
  const superseded = latchedLoader<string>()
  const first = outcome(table.fetch('k', superseded.loader))
  await settle()
  return { table, superseded, first }
}

/** Answers both flights, the forced one first, and lets the answers through. */
async function answer(superseded: ReturnType<typeof latchedLoader<string>>, refresh: ReturnType<typeof latchedLoader<string>>) {
  refresh.only().resolve('FRESH')
  superseded.only().resolve('OLD')
  await settle()
}

describe('a read made in the same turn as a forced refresh, after it', () => {
  it('a plain read: gets the refresh answer, not the superseded flight', async () => {
    const { table, superseded, first } = await withFlight()
    const refresh = latchedLoader<string>()
    const forced = outcome(table.fetch('k', refresh.loader, { forceRefresh: true }))
    const after = outcome(table.fetch('k', () => 'never'))
    await settle()
    await answer(superseded, refresh)
    expect([first.value, forced.value, after.value]).toEqual(['OLD', 'FRESH', 'FRESH'])
    expect(table.peek('k')).toBe('FRESH')
    await table.close()
  })

  it('a herd waiter of a plain miss made before the refresh: the miss keeps the old flight, the waiter after the refresh does not', async () => {
    const { table, superseded, first } = await withFlight()
    const before = outcome(table.fetch('k', () => 'never'))
    const refresh = latchedLoader<string>()
    const forced = outcome(table.fetch('k', refresh.loader, { forceRefresh: true }))
    const after = outcome(table.fetch('k', () => 'never'))
    await settle()
    await answer(superseded, refresh)
    expect([first.value, before.value, forced.value, after.value]).toEqual(['OLD', 'OLD', 'FRESH', 'FRESH'])
    await table.close()
  })

  it('a plain read, after a forced refresh with options: gets the refresh answer', async () => {
    const { table, superseded } = await withFlight()
    const refresh = latchedLoader<string>()
    const forced = outcome(table.fetch('k', refresh.loader, { forceRefresh: true, timeout: 10_000 }))
    const after = outcome(table.fetch('k', () => 'never'))
    await settle()
    await answer(superseded, refresh)
    expect([forced.value, after.value]).toEqual(['FRESH', 'FRESH'])
    await table.close()
  })

  it('a fetchMany after a forced fetchMany: gets the refresh answer', async () => {
    const { table, superseded } = await withFlight()
    const refresh = latchedBatchLoader<string>()
    const forced = outcome(table.fetchMany(['k'], refresh.loader, { forceRefresh: true }))
    const after = outcome(table.fetchMany(['k'], (ids) => ids.map(() => 'never')))
    await settle()
    refresh.only().resolve(['FRESH'])
    superseded.only().resolve('OLD')
    await settle()
    expect([forced.value, after.value]).toEqual([['FRESH'], ['FRESH']])
    await table.close()
  })
})

describe('a forced refresh, as every miss', () => {
  it('calls its loader after fetch returns, not inside it', async () => {
    const table = createTable<string>({ name: 'forced-later' })
    for (const options of [{ forceRefresh: true }, { forceRefresh: true, timeout: 1_000 }]) {
      const log: string[] = []
      const read = table.fetch('k', () => (log.push('loader called'), 'v'), options)
      log.push('fetch returned')
      await read
      expect(log).toEqual(['fetch returned', 'loader called'])
    }
    await table.close()
  })
})
