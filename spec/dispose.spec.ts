/**
 * Closing what a table was given: `await using` on tables, stores and buses, and the `closeStores`
 * option, which makes a table's `close()` close its `l2` and `bus` once it has stopped.
 */
import { describe, expect, it } from 'vitest'
import { BusClosedError, L2ClosedError, TableClosedError, createTable, localBus, memoryL2 } from '../src/index.js'
import type { Bus, L2Store } from '../src/store.js'
import { manualClock } from '../src/testing.js'
import { latchedLoader, outcome, settle } from './support/latch.js'

const message = { table: 't', id: 'a', version: 1, kind: 'invalidate', origin: 'elsewhere' } as const

describe('await using and closeStores', () => {
  it('a table declared with await using is closed when its block ends', async () => {
    let escaped: ReturnType<typeof createTable<string>> | undefined
    {
      await using table = createTable<string>({ clock: manualClock() })
      escaped = table
      expect(await table.fetch('a', () => 'v')).toBe('v')
    }
    await expect(escaped.fetch('b', () => 'w')).rejects.toBeInstanceOf(TableClosedError)
  })

  it('stores and buses declared with await using are closed when their block ends', async () => {
    let store: L2Store | undefined
    let bus: Bus | undefined
    {
      await using l2 = memoryL2()
      await using local = localBus()
      store = l2
      bus = local
    }
    await expect(store.get('t', 'a')).rejects.toBeInstanceOf(L2ClosedError)
    await expect(store.get('t', 'a')).rejects.toMatchObject({ code: 'ECHOSTORE_L2_CLOSED' })
    await expect(bus.publish(message)).rejects.toBeInstanceOf(BusClosedError)
  })

  it('closeStores: close() closes the l2 and the bus, after the flights in progress answered', async () => {
    const l2 = memoryL2()
    const bus = localBus()
    const table = createTable<string>({ clock: manualClock(), l2, bus, closeStores: true })
    const origin = latchedLoader<string>()
    const reader = table.fetch('a', origin.loader)
    await settle()
    const closing = table.close()
    await settle()
    expect(await l2.get('t', 'probe')).toBeUndefined() // still open while the flight runs
    origin.only().resolve('v')
    expect(await reader).toBe('v')
    await closing
    await expect(l2.get('t', 'a')).rejects.toBeInstanceOf(L2ClosedError)
    await expect(l2.set('t', 'a', { kind: 'value', value: 'v', version: 1, ttl: 1_000 })).rejects.toMatchObject({ code: 'ECHOSTORE_L2_CLOSED' })
    await expect(bus.publish(message)).rejects.toBeInstanceOf(BusClosedError)
  })

  it('without closeStores the l2 and bus stay open for the tables that share them', async () => {
    const l2 = memoryL2()
    const bus = localBus()
    await createTable<string>({ l2, bus }).close()
    expect(await l2.get('t', 'a')).toBeUndefined()
    await expect(bus.publish(message)).resolves.toBeUndefined()
    await Promise.all([l2.close(), bus.close()])
  })

  it('a store whose close fails: close() rejects with that error, and the bus is still closed', async () => {
    const failure = new Error('store close failed')
    const l2 = Object.assign(memoryL2(), { close: () => Promise.reject(failure) })
    const bus = localBus()
    const table = createTable<string>({ l2, bus, closeStores: true })
    await expect(table.close()).rejects.toBe(failure)
    await expect(table.close()).rejects.toBe(failure) // the same promise every call
    await expect(bus.publish(message)).rejects.toBeInstanceOf(BusClosedError)
  })

  it('a store whose close throws at once: close() rejects with that error, and the bus is still closed', async () => {
    const failure = new Error('store close threw')
    const l2 = Object.assign(memoryL2(), {
      close: (): Promise<void> => {
        throw failure
      },
    })
    const bus = localBus()
    const table = createTable<string>({ l2, bus, closeStores: true })
    await expect(table.close()).rejects.toBe(failure)
    await expect(bus.publish(message)).rejects.toBeInstanceOf(BusClosedError)
  })

  it("a store of the user's whose close never settles leaves close() pending until it does; the bus is closed meanwhile", async () => {
    let finish!: () => void
    const l2 = Object.assign(memoryL2(), { close: () => new Promise<void>((resolve) => (finish = resolve)) })
    const bus = localBus()
    const table = createTable<string>({ l2, bus, closeStores: true })
    const closing = outcome(table.close())
    await settle()
    expect(closing.state).toBe('pending')
    await expect(bus.publish(message)).rejects.toBeInstanceOf(BusClosedError)
    finish()
    await settle()
    expect(closing.state).toBe('fulfilled')
  })

  it('closeStores must be a boolean, named in the error', () => {
    expect(() => createTable({ closeStores: 'yes' as never })).toThrow(/option "closeStores" must be a boolean/)
  })
})
