/**
 * `clear()`: every row of the table goes and every flight in progress is fenced; with an L2, no
 * entry written before the clear is read again by any instance; with a bus, every instance drops
 * its rows. Counted in `clears`.
 */
import { describe, expect, it } from 'vitest'
import { type TableEvents, TableClosedError, createTable, localBus, memoryL2 } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { chaosL2 } from '../src/testing.js'
import { latchedLoader, outcome, settle } from './support/latch.js'

describe('clear', () => {
  it('drops every row: the next fetch of each id loads again; counts clears and tells the listeners', async () => {
    const table = createTable<string | undefined>({ name: 'c', clock: manualClock(0) })
    const events: TableEvents['clear'][] = []
    table.events.on('clear', (event) => events.push(event))
    for (const id of ['a', 'b', 'c']) await table.fetch(id, () => id.toUpperCase())
    expect(await table.clear()).toEqual({ l2: 'none', broadcast: false })
    expect(table.stats()).toMatchObject({ size: 0, clears: 1 })
    expect(events).toEqual([{ table: 'c', dropped: 3, remote: false }])
    let loads = 0
    expect(await table.fetch('a', () => (loads++, 'A2'))).toBe('A2')
    expect(loads).toBe(1)
    await table.close()
  })

  it('fences a flight in progress: its waiters get its answer, which is stored in neither layer', async () => {
    const l2 = memoryL2({ clock: manualClock(0) })
    const table = createTable<string | undefined>({ name: 'c', clock: manualClock(0), l2 })
    const origin = latchedLoader<string>()
    const waiting = [outcome(table.fetch('k', origin.loader)), outcome(table.fetch('k', origin.loader))]
    await settle()
    await table.clear()
    origin.only().resolve('loaded before the clear')
    await settle()
    expect(waiting.map((w) => w.value)).toEqual(['loaded before the clear', 'loaded before the clear'])
    expect(table.stats()).toMatchObject({ size: 0, fenced: 1, inflight: 0 })
    expect(await l2.get('c', 'k')).toBeUndefined()
    const next = outcome(table.fetch('k', origin.loader))
    await settle()
    expect(origin.calls).toHaveLength(2) // a new flight: the fenced one is no longer joinable
    origin.calls[1]!.resolve('after')
    await settle()
    expect(next.value).toBe('after')
    await Promise.all([table.close(), l2.close()])
  })

  it('with a shared L2 and no bus: another instance keeps its own rows, but never reads an entry from before the clear', async () => {
    const clock = manualClock(0)
    const l2 = memoryL2({ clock })
    const [a, b] = [0, 1].map(() => createTable<string | undefined>({ name: 'c', ttl: 1_000, jitter: 0, clock, l2 }))
    await a!.fetch('k', () => 'old')
    expect(await b!.fetch('k', () => 'never')).toBe('old') // from L2
    await a!.clear()
    expect(b!.peek('k')).toBe('old') // no bus: its row lives out its ttl
    clock.advance(1_000)
    let loads = 0
    expect(await b!.fetch('k', () => (loads++, 'new'))).toBe('new')
    expect(loads).toBe(1)
    expect(b!.stats()).toMatchObject({ l2_hits: 1, clears: 0 })
    await Promise.all([a!.close(), b!.close(), l2.close()])
  })

  it('with a bus: every instance drops its rows and fences its flights, and counts the clear', async () => {
    const clock = manualClock(0)
    const l2 = memoryL2({ clock })
    const bus = localBus()
    const [a, b] = [0, 1].map(() => createTable<string | undefined>({ name: 'c', clock, l2, bus }))
    const heard: TableEvents['clear'][] = []
    b!.events.on('clear', (event) => heard.push(event))
    await a!.fetch('k', () => 'old')
    await b!.fetch('k', () => 'never')
    await b!.fetch('j', () => 'J')
    const origin = latchedLoader<string>()
    const inFlight = outcome(b!.fetch('m', origin.loader))
    await settle()
    expect(await a!.clear()).toEqual({ l2: 'cleared', broadcast: true })
    await settle()
    expect(heard).toEqual([{ table: 'c', dropped: 2, remote: true }])
    expect(b!.stats()).toMatchObject({ size: 0, clears: 1 })
    origin.only().resolve('M')
    await settle()
    expect(inFlight.value).toBe('M')
    expect(b!.has('m')).toBe(false) // fenced
    let loads = 0
    expect(await b!.fetch('k', () => (loads++, 'new'))).toBe('new')
    expect(loads).toBe(1)
    await Promise.all([a!.close(), b!.close(), l2.close(), bus.close()])
  })

  it('a clear that L2 cannot take still clears this instance, and says to retry', async () => {
    const clock = manualClock(0)
    const l2 = chaosL2(memoryL2({ clock }), clock)
    const table = createTable<string | undefined>({ name: 'c', clock, l2 })
    await table.fetch('k', () => 'old')
    l2.fail('clear', { kind: 'throw' })
    expect(await table.clear()).toEqual({ l2: 'failed', broadcast: false })
    expect(table.stats()).toMatchObject({ size: 0, clears: 1, l2_errors: 1 })
    await Promise.all([table.close(), l2.close()])
  })

  it('is refused once the table is closed, with a TableClosedError that names the table and carries id: undefined', async () => {
    const table = createTable<string | undefined>({ name: 'c' })
    await table.close()
    await expect(table.clear()).rejects.toBeInstanceOf(TableClosedError)
    await expect(table.clear()).rejects.toThrow('table "c" is closed; clear() was refused')
    const error = (await table.clear().then(
      () => undefined,
      (reason: unknown) => reason,
    )) as TableClosedError
    expect(error).toMatchObject({ code: 'ECHOSTORE_TABLE_CLOSED', table: 'c' })
    expect('id' in error).toBe(true)
    expect(error.id).toBeUndefined()
  })
})
