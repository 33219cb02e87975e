import { describe, expect, it } from 'vitest'
import { FetchTimeoutError, createTable } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { latchedLoader, outcome, settle } from './support/latch.js'

describe("a waiter's own timeout", () => {
  it('rejects that waiter only, with FetchTimeoutError naming table and id; the flight goes on and fills', async () => {
    const clock = manualClock()
    const table = createTable<string | undefined>({ name: 'catalog', clock })
    const origin = latchedLoader<string>()
    const impatient = outcome(table.fetch('sku', origin.loader, { timeout: 100 }))
    const patient = table.fetch('sku', origin.loader)
    await settle()
    clock.advance(100)
    await settle()
    expect(impatient.state).toBe('rejected')
    expect(impatient.error).toBeInstanceOf(FetchTimeoutError)
    expect(impatient.error).toMatchObject({ code: 'ECHOSTORE_FETCH_TIMEOUT', table: 'catalog', id: 'sku', timeout: 100 })
    expect((impatient.error as Error).message).toMatch(/catalog.*sku|sku.*catalog/)
    origin.only().resolve('v')
    expect(await patient).toBe('v')
    expect(table.stats()).toMatchObject({ timeouts: 1, fills: 1, inflight: 0 })
    await table.close()
  })

  it('when every waiter has timed out, the flight still fills the table; the next read is a hit', async () => {
    const clock = manualClock()
    const table = createTable<string | undefined>({ clock })
    const origin = latchedLoader<string>()
    const waiters = [outcome(table.fetch('k', origin.loader, { timeout: 10 })), outcome(table.fetch('k', origin.loader, { timeout: 20 }))]
    await settle()
    clock.advance(20)
    await settle()
    expect(waiters.map((w) => w.state)).toEqual(['rejected', 'rejected'])
    expect(origin.only().context.signal.aborted).toBe(false)
    expect(table.stats()).toMatchObject({ timeouts: 2, inflight: 1 })
    origin.only().resolve('late but useful')
    await settle()
    expect(table.stats()).toMatchObject({ fills: 1, inflight: 0, size: 1 })
    expect(await table.fetch('k', origin.loader)).toBe('late but useful')
    expect(table.stats().hits).toBe(1)
    await table.close()
  })

  it('an answer before the deadline clears the deadline timer', async () => {
    const clock = manualClock()
    const table = createTable<string | undefined>({ clock, sweepInterval: 1e9 })
    const before = clock.pending()
    expect(await table.fetch('k', () => 'v', { timeout: 1_000 })).toBe('v')
    expect(clock.pending()).toBe(before)
    await table.close()
  })

  it.each([0, -1, Number.NaN, Number.POSITIVE_INFINITY, '10'])('a timeout of %s is refused with an error naming it', async (timeout) => {
    const table = createTable<string | undefined>({ clock: manualClock() })
    await expect(table.fetch('k', () => 'v', { timeout: timeout as number })).rejects.toThrow(/"timeout"/)
    expect(table.stats()).toMatchObject({ hits: 0, misses: 0 })
    await table.close()
  })
})
