import { describe, expect, it } from 'vitest'
import { TableClosedError, createTable, memoryL2 } from '../src/index.js'
import type { L2Store } from '../src/store.js'
import { manualClock } from '../src/testing.js'
import { latchedLoader, outcome, settle } from './support/latch.js'

describe('close', () => {
  it('refuses new fetches with TableClosedError (counted as neither hit nor miss), lets flights in progress answer', async () => {
    const table = createTable<string | undefined>({ name: 'cat', clock: manualClock() })
    const origin = latchedLoader<string>()
    const inFlight = table.fetch('k', origin.loader)
    await settle()
    const closed = outcome(table.close())
    await settle()
    expect(closed.state).toBe('pending') // a flight is still answering
    const refused = outcome(table.fetch('k', origin.loader))
    await settle()
    expect(refused.state).toBe('rejected')
    expect(refused.error).toBeInstanceOf(TableClosedError)
    expect(refused.error).toMatchObject({ code: 'ECHOSTORE_TABLE_CLOSED', table: 'cat', id: 'k' })
    origin.only().resolve('v')
    expect(await inFlight).toBe('v')
    await settle()
    expect(closed.state).toBe('fulfilled')
    expect(table.stats()).toMatchObject({ misses: 1, hits: 0, inflight: 0 })
  })

  it('is idempotent and stops every timer; put and invalidate are refused after it', async () => {
    const clock = manualClock()
    const table = createTable<string | undefined>({ clock })
    const first = table.close()
    expect(table.close()).toBe(first)
    await first
    expect(clock.pending()).toBe(0)
    await expect(table.put('k', 'v')).rejects.toBeInstanceOf(TableClosedError)
    await expect(table.invalidate('k')).rejects.toBeInstanceOf(TableClosedError)
  })

  it('a flight that never settles is bounded by loadTimeout, then close resolves', async () => {
    const clock = manualClock()
    const table = createTable<string | undefined>({ clock, loadTimeout: 1_000 })
    const stuck = outcome(table.fetch('k', () => new Promise<string>(() => {})))
    const closed = outcome(table.close())
    clock.advance(1_000)
    await settle()
    expect(stuck.state).toBe('rejected')
    expect(closed.state).toBe('fulfilled')
  })
})

describe('a change racing close()', () => {
  it('put and invalidate still waiting on a stuck L2 when the table closes settle (l2 failed, not applied)', async () => {
    const clock = manualClock(0)
    const inner = memoryL2({ clock })
    // Every version and write waits for ever: only the table's close can end them.
    const l2: L2Store = {
      ...inner,
      get: inner.get.bind(inner),
      nextVersion: () => new Promise(() => {}),
      set: () => new Promise(() => {}),
      clear: inner.clear.bind(inner),
      close: inner.close.bind(inner),
    }
    const table = createTable<string>({ name: 'cat', ttl: 10_000, clock, l2 })
    const put = outcome(table.put('a', 'v'))
    const invalidate = outcome(table.invalidate('b'))
    const given = outcome(table.put('c', 'v', { version: 7 })) // its own version: straight to the write
    await settle()
    await table.close()
    for (let i = 0; i < 4; i++) await settle()
    expect([put.state, invalidate.state, given.state]).toEqual(['fulfilled', 'fulfilled', 'fulfilled'])
    for (const change of [put, invalidate, given]) expect(change.value).toMatchObject({ applied: false, l2: 'failed' })
  })
})
