/**
 * Regressions found in review: a throwing event listener must not stop the table; a change reports
 * what L2 did with it; invalidate on a full table leaves no window for a stale read; a waiter
 * answered at once leaves no timer or listener behind; timers longer than Node honours are refused.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { L2Store } from '../src/store.js'
import { createTable, memoryL2 } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { chaosL2 } from '../src/testing.js'
import { latchedLoader, outcome, settle } from './support/latch.js'

afterEach(() => {
  vi.restoreAllMocks()
})

describe('a throwing event listener', () => {
  it.each(['load', 'fill', 'error', 'sweep'] as const)('on %s is reported as a warning, and the table goes on', async (type) => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => {})
    const clock = manualClock(0)
    const table = createTable<string | undefined>({ clock, ttl: 100, jitter: 0, sweepInterval: 100 })
    table.events.on(type, () => {
      throw new Error('listener bug')
    })
    table.events.on('*', () => {
      throw new Error('wildcard bug')
    })
    await table.fetch('a', () => 'A')
    await expect(table.fetch('b', () => Promise.reject(new Error('origin down')))).rejects.toThrow('origin down')
    clock.advance(300) // the sweeper reclaims 'a'
    expect(await table.fetch('c', () => 'C')).toBe('C')
    const second = latchedLoader<string>()
    const waiting = table.fetch('d', second.loader)
    await settle()
    second.only().resolve('D')
    expect(await waiting).toBe('D')
    expect(warn).toHaveBeenCalled()
    expect(String(warn.mock.calls[0]![0])).toMatch(/event listener threw/)
    await table.close() // still stops: the owner is alive
    expect(clock.pending()).toBe(0)
  })

  it('on l2_error does not leave the L2 call or the fetch pending', async () => {
    vi.spyOn(process, 'emitWarning').mockImplementation(() => {})
    const clock = manualClock(0)
    const l2 = chaosL2(memoryL2({ clock }), clock)
    const table = createTable<string | undefined>({ clock, l2 })
    table.events.on('l2_error', () => {
      throw new Error('listener bug')
    })
    l2.fail('all', { kind: 'throw' })
    expect(await table.fetch('k', () => 'from origin')).toBe('from origin')
    expect(table.stats().l2_errors).toBeGreaterThanOrEqual(1)
    l2.heal()
    await table.close()
  })
})

describe('what L2 did with a change', () => {
  it('is written, failed or none', async () => {
    const clock = manualClock(0)
    const l2 = chaosL2(memoryL2({ clock }), clock)
    const withL2 = createTable<string | undefined>({ clock, l2 })
    expect(await withL2.put('k', 'v')).toMatchObject({ applied: true, l2: 'written' })
    l2.fail('set', { kind: 'throw' })
    expect(await withL2.invalidate('k')).toMatchObject({ applied: true, l2: 'failed' }) // retry it: other processes may read the old entry
    expect(await withL2.put('k', 'v2')).toMatchObject({ applied: true, l2: 'failed' })
    l2.heal()
    const alone = createTable<string | undefined>({ clock })
    expect(await alone.invalidate('k')).toMatchObject({ applied: true, l2: 'none' })
    await Promise.all([withL2.close(), alone.close()])
  })
})

describe('invalidate on a full table', () => {
  it('writes the L2 tombstone first: a fetch started after it resolves never gets the old entry', async () => {
    const clock = manualClock(1_000)
    const store = memoryL2({ clock })
    await store.set('table', 'd', { kind: 'value', value: 'OLD', version: 0, ttl: 60_000 }) // loaded by another process
    const latch = () => {
      let open!: () => void
      const opened = new Promise<void>((resolve) => (open = resolve))
      return { opened, open }
    }
    const tombstoneAsked = latch()
    const tombstoneHeld = latch()
    let replies: Promise<void> = Promise.resolve()
    const l2: L2Store = {
      ...store,
      timeout: 60_000,
      async get(table, id) {
        const entry = await store.get(table, id) // read now, answer later (a pipelined reply)
        await replies
        return entry
      },
      async set(table, id, entry) {
        if (entry.kind === 'tombstone') {
          tombstoneAsked.open()
          await tombstoneHeld.opened
        }
        return store.set(table, id, entry)
      },
    }
    const table = createTable<string | undefined>({ clock, capacity: 1, jitter: 0, l2 })
    await table.fetch('x', () => 'X') // full: 'd' has no row, so L1 can hold no tombstone for it
    const heldReplies = latch()
    replies = heldReplies.opened
    const invalidated = table.invalidate('d')
    await tombstoneAsked.opened
    const early = outcome(table.fetch('d', () => 'NEW')) // during the invalidate: it reads the old entry
    tombstoneHeld.open()
    await invalidated
    const late = table.fetch('d', () => 'NEW') // started after invalidate resolved
    heldReplies.open()
    expect(await late).toBe('NEW')
    await settle()
    expect(early.state).toBe('fulfilled')
    await table.close()
  })
})

describe('a waiter answered at once', () => {
  it('leaves no deadline timer and no abort listener behind', async () => {
    for (let turns = 0; turns < 6; turns++) {
      const clock = manualClock(1_000)
      const table = createTable<string | undefined>({ clock, coalesce: false, jitter: 0, sweepInterval: 1e9 })
      const origin = latchedLoader<string>()
      const first = table.fetch('a', origin.loader) // a flight that cannot be joined
      await settle()
      table.setCoalescing(true)
      origin.only().resolve('A')
      for (let i = 0; i < turns; i++) await Promise.resolve() // land between the result being posted and processed
      const controller = new AbortController()
      let listeners = 0
      const { signal } = controller
      const add = signal.addEventListener.bind(signal)
      const remove = signal.removeEventListener.bind(signal)
      signal.addEventListener = ((...args: Parameters<typeof add>) => (listeners++, add(...args))) as typeof add
      signal.removeEventListener = ((...args: Parameters<typeof remove>) => (listeners--, remove(...args))) as typeof remove
      const value = await table.fetch('a', () => 'B', { timeout: 5_000, signal }) // 'A' once the first flight's row is in
      expect(['A', 'B']).toContain(value)
      await first
      await table.close()
      expect(clock.pending()).toBe(0)
      expect(listeners).toBe(0)
    }
  })
})

describe('timers longer than Node honours', () => {
  it.each([
    [{ loadTimeout: 2 ** 31 }, /"loadTimeout"/],
    [{ sweepInterval: 2 ** 32 }, /"sweepInterval"/],
  ])('%o is refused at construction', (options, message) => {
    expect(() => createTable(options)).toThrow(RangeError)
    expect(() => createTable(options)).toThrow(message)
  })

  it('a fetch timeout over 2^31 − 1 ms is refused', async () => {
    const table = createTable<string | undefined>({ clock: manualClock() })
    await expect(table.fetch('k', () => 'v', { timeout: 2 ** 31 })).rejects.toThrow(RangeError)
    await table.close()
  })
})

describe('a change older than what the table knows', () => {
  it('never reaches L2, even when L2 lost the newer entry', async () => {
    const clock = manualClock(0)
    const l2 = memoryL2({ clock })
    const table = createTable<string | undefined>({ name: 't', clock, l2, ttl: 1_000, jitter: 0, loadTimeout: 500, sweepInterval: 1e9 })
    await table.put('q', 'v10', { version: 10 })
    clock.advance(1_001) // L2 lost it (its lifetime passed); L1 still holds the expired row and its version
    expect(await table.put('q', 'v5', { version: 5 })).toMatchObject({ applied: false, l2: 'refused' })
    expect(await table.invalidate('q', { version: 6 })).toMatchObject({ applied: false, l2: 'refused' })
    expect(await l2.get('t', 'q')).toBeUndefined()
    await table.close()
  })
})

describe('after close', () => {
  it('put and invalidate are refused with an error that names the operation', async () => {
    const table = createTable<string | undefined>({ name: 'shut', clock: manualClock() })
    await table.close()
    await expect(table.put('a', 'v')).rejects.toThrow(/table "shut" is closed; put\("a"\) was refused/)
    await expect(table.invalidate('a')).rejects.toThrow(/invalidate\("a"\) was refused/)
    await expect(table.fetch('a', () => 'v')).rejects.toThrow(/fetch\("a"\) was refused/)
  })
})
