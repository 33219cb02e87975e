import { describe, expect, it } from 'vitest'
import { createTable } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { latchedLoader, outcome, settle } from './support/latch.js'

describe('a waiter leaves by its signal', () => {
  it('rejects with signal.reason; the flight goes on for the others', async () => {
    const table = createTable<string | undefined>({ clock: manualClock() })
    const origin = latchedLoader<string>()
    const controller = new AbortController()
    const leaving = outcome(table.fetch('k', origin.loader, { signal: controller.signal }))
    const staying = table.fetch('k', origin.loader)
    await settle()
    const reason = new Error('client disconnected')
    controller.abort(reason)
    await settle()
    expect(leaving).toMatchObject({ state: 'rejected', error: reason })
    expect(origin.only().context.signal.aborted).toBe(false)
    origin.only().resolve('v')
    expect(await staying).toBe('v')
    expect(table.stats()).toMatchObject({ cancelled: 1, fills: 1, abandoned: 0 })
    await table.close()
  })

  it('when every waiter cancels, the loader signal aborts, the entry goes, a new fetch starts afresh, and the late result is not stored', async () => {
    const table = createTable<string | undefined>({ clock: manualClock() })
    const origin = latchedLoader<string>()
    const controllers = [new AbortController(), new AbortController()]
    const waiters = controllers.map((c) => outcome(table.fetch('k', origin.loader, { signal: c.signal })))
    await settle()
    const first = origin.only()
    const signal = first.context.signal
    controllers[0]!.abort()
    await settle()
    expect(signal.aborted).toBe(false)
    controllers[1]!.abort()
    await settle()
    expect(waiters.map((w) => w.state)).toEqual(['rejected', 'rejected'])
    expect((waiters[1]!.error as Error).name).toBe('AbortError')
    expect(signal.aborted).toBe(true)
    expect(table.stats()).toMatchObject({ cancelled: 2, abandoned: 1, inflight: 0 })

    const fresh = table.fetch('k', origin.loader)
    await settle()
    expect(origin.calls).toHaveLength(2)
    first.resolve('stale') // the abandoned flight answers late: discarded
    await settle()
    expect(table.stats().size).toBe(0)
    origin.calls[1]!.resolve('new')
    expect(await fresh).toBe('new')
    expect(table.stats()).toMatchObject({ size: 1, fills: 1, flights: 2 })
    await table.close()
  })

  it('an already-aborted signal rejects at once with its reason, starts nothing, counts only in cancelled', async () => {
    const table = createTable<string | undefined>({ clock: manualClock() })
    const origin = latchedLoader<string>()
    const reason = new Error('gone before asking')
    const result = outcome(table.fetch('k', origin.loader, { signal: AbortSignal.abort(reason) }))
    await settle()
    expect(result).toMatchObject({ state: 'rejected', error: reason })
    expect(origin.calls).toHaveLength(0)
    expect(table.stats()).toMatchObject({ hits: 0, misses: 0, cancelled: 1, flights: 0 })
    await table.close()
  })

  it('a signal that aborts after the answer changes nothing and leaves no listener behind', async () => {
    const table = createTable<string | undefined>({ clock: manualClock() })
    const controller = new AbortController()
    let added = 0
    let removed = 0
    const { signal } = controller
    const add = signal.addEventListener.bind(signal)
    const remove = signal.removeEventListener.bind(signal)
    signal.addEventListener = ((...args: Parameters<typeof add>) => (added++, add(...args))) as typeof add
    signal.removeEventListener = ((...args: Parameters<typeof remove>) => (removed++, remove(...args))) as typeof remove
    expect(await table.fetch('k', () => 'v', { signal })).toBe('v')
    // One listener tried as the fetch is made (a signal that cannot be listened to is refused then), one while it waits: both gone.
    expect([added, removed]).toEqual([2, 2])
    controller.abort()
    await settle()
    expect(table.stats()).toMatchObject({ cancelled: 0, fills: 1 })
    await table.close()
  })
})
