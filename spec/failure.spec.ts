import { describe, expect, it } from 'vitest'
import { LoadTimeoutError, createTable } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { latchedLoader, outcome, settle } from './support/latch.js'

describe('a failed fill answers every waiter with the one error and caches nothing', () => {
  it('a rejected loader: every waiter gets the same error object; the next fetch loads again', async () => {
    const table = createTable<string | undefined>({ clock: manualClock() })
    const origin = latchedLoader<string>()
    const waiters = Array.from({ length: 5 }, () => outcome(table.fetch('k', origin.loader)))
    await settle()
    const boom = new Error('origin down')
    origin.only().reject(boom)
    await settle()
    for (const waiter of waiters) expect(waiter).toMatchObject({ state: 'rejected', error: boom })
    for (const waiter of waiters) expect(waiter.error).toBe(boom)
    expect(table.stats()).toMatchObject({ size: 0, load_errors: 1, fills: 0, inflight: 0 })
    expect(await table.fetch('k', () => 'recovered')).toBe('recovered')
    await table.close()
  })

  it.each([
    [
      'throws synchronously',
      () => {
        throw new Error('sync')
      },
    ],
    ['returns a rejected non-Error', () => Promise.reject('a string reason')],
  ])('a loader that %s answers every waiter with that error', async (_, loader) => {
    const table = createTable<string | undefined>({ clock: manualClock() })
    const results = await Promise.allSettled([table.fetch('k', loader), table.fetch('k', loader)])
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected'])
    const [a, b] = results as PromiseRejectedResult[]
    expect(a!.reason).toBe(b!.reason)
    expect(table.stats()).toMatchObject({ loads: 1, load_errors: 1, inflight: 0 })
    await table.close()
  })

  it('a loader that returns a plain value (no promise) answers every waiter', async () => {
    const table = createTable<{ v: number } | undefined>({ clock: manualClock() })
    const value = { v: 1 }
    const [a, b] = await Promise.all([table.fetch('k', () => value), table.fetch('k', () => ({ v: 2 }))])
    expect(a).toBe(value)
    expect(b).toBe(value)
    await table.close()
  })

  it('a loader that never settles: loadTimeout rejects every waiter, aborts the loader signal, releases the entry', async () => {
    const clock = manualClock()
    const table = createTable<string | undefined>({ name: 'slow', clock, loadTimeout: 500 })
    const origin = latchedLoader<string>()
    const waiters = [outcome(table.fetch('k', origin.loader)), outcome(table.fetch('k', origin.loader))]
    await settle()
    const { signal } = origin.only().context
    clock.advance(499)
    await settle()
    expect(waiters[0]!.state).toBe('pending')
    expect(signal.aborted).toBe(false)
    clock.advance(1)
    await settle()
    for (const waiter of waiters) {
      expect(waiter.state).toBe('rejected')
      expect(waiter.error).toBeInstanceOf(LoadTimeoutError)
      expect(waiter.error).toMatchObject({ code: 'ECHOSTORE_LOAD_TIMEOUT', table: 'slow', id: 'k', loadTimeout: 500 })
    }
    expect(waiters[0]!.error).toBe(waiters[1]!.error)
    expect(signal.aborted).toBe(true)
    expect(signal.reason).toBe(waiters[0]!.error)
    expect(table.stats()).toMatchObject({ load_errors: 1, inflight: 0, size: 0 })
    // The late answer of the timed-out load is discarded; a new fetch starts a fresh flight.
    origin.only().resolve('late')
    await settle()
    expect(table.stats().size).toBe(0)
    const again = table.fetch('k', origin.loader)
    await settle()
    expect(origin.calls).toHaveLength(2)
    origin.calls[1]!.resolve('fresh')
    expect(await again).toBe('fresh')
    await table.close()
  })

  it('LoadTimeoutError carries the loadTimeout that passed, and its message names it with the table and the id', async () => {
    const clock = manualClock()
    const table = createTable<string | undefined>({ name: 'slow', clock, loadTimeout: 750 })
    const waiter = outcome(table.fetch('k', latchedLoader<string>().loader))
    await settle()
    clock.advance(750)
    await settle()
    expect(waiter.error).toBeInstanceOf(LoadTimeoutError)
    const error = waiter.error as LoadTimeoutError
    expect(error.loadTimeout).toBe(750)
    expect(error.message).toBe('echostore: loading "k" for table "slow" took longer than loadTimeout (750 ms); the loader was aborted through its signal. Raise loadTimeout or make the loader faster.')
    await table.close()
  })

  it('cancel some waiters, fail the fill; the rest get the loader error; a retry succeeds', async () => {
    const table = createTable<string | undefined>({ clock: manualClock() })
    const origin = latchedLoader<string>()
    const controllers = Array.from({ length: 10 }, () => new AbortController())
    const waiters = controllers.map((c) => outcome(table.fetch('sku-1', origin.loader, { signal: c.signal })))
    await settle()
    const reasons = controllers.slice(0, 4).map((c, i) => {
      const reason = new Error(`caller ${i} went away`)
      c.abort(reason)
      return reason
    })
    await settle()
    const boom = new Error('origin 503')
    origin.only().reject(boom)
    await settle()
    waiters.slice(0, 4).forEach((w, i) => expect(w).toMatchObject({ state: 'rejected', error: reasons[i] }))
    for (const w of waiters.slice(4)) expect(w.error).toBe(boom)
    expect(origin.only().context.signal.aborted).toBe(false) // six waiters were still there
    expect(table.stats()).toMatchObject({ cancelled: 4, load_errors: 1, inflight: 0, size: 0 })
    const retry = table.fetch('sku-1', origin.loader)
    await settle()
    origin.calls[1]!.resolve('in stock')
    expect(await retry).toBe('in stock')
    expect(table.stats()).toMatchObject({ loads: 2, fills: 1, inflight: 0 })
    await table.close()
  })
})
