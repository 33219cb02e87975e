/**
 * Changes (`put`, `invalidate`, `clear`) made before `close()` whose next step comes once the table
 * is closing: no change asks L2 anything after it found the table closed (a call after the owner
 * stopped has no bound), so each settles; and a clear made before `close()` on a table without L2
 * drops this instance's rows before it resolves, as it says.
 */
import { describe, expect, it } from 'vitest'
import { L2UnfitValueError, createTable, localBus, memoryL2 } from '../src/index.js'
import type { L2Store } from '../src/store.js'
import { manualClock } from '../src/testing.js'
import { latchedLoader, outcome, settle } from './support/latch.js'

type Method = 'get' | 'set' | 'nextVersion' | 'clear'

/**
 * `store`, recording every call it gets. A held method's calls reach the store at once, but their
 * answers wait for `release`, which hands each to the table at once (the store has answered by then);
 * a stalled method's calls never answer (an outage).
 */
function gatedL2(store: L2Store) {
  const calls: Method[] = []
  const holding = new Set<Method>()
  const stalling = new Set<Method>()
  const held: (() => void)[] = []
  const gate =
    <A extends unknown[], T>(name: Method, run: (...args: A) => Promise<T>) =>
    (...args: A): Promise<T> => {
      calls.push(name)
      if (stalling.has(name)) return new Promise<T>(() => {})
      if (!holding.has(name)) return run(...args)
      return new Promise<T>((resolve, reject) => {
        let answer = (): void => reject(new Error('released before the store answered'))
        run(...args).then(
          (value) => (answer = () => resolve(value)),
          (error: unknown) => (answer = () => reject(error)),
        )
        held.push(() => answer())
      })
    }
  const gated: L2Store = {
    get: gate('get', store.get.bind(store)),
    set: gate('set', store.set.bind(store)),
    nextVersion: gate('nextVersion', store.nextVersion.bind(store)),
    clear: gate('clear', store.clear.bind(store)),
    close: () => store.close(),
  }
  return {
    store: gated,
    calls,
    hold: (name: Method) => void holding.add(name),
    stall: (name: Method) => void stalling.add(name),
    /** Hands every held answer to the table now; later calls answer as the store does. */
    release: () => {
      holding.clear()
      for (const answer of held.splice(0)) answer()
    },
  }
}

/** `store`, answering that it will not hold the value `'huge'` (too large), as a store with a size limit does. */
function refusingHuge(store: L2Store): L2Store {
  return {
    get: store.get.bind(store),
    set: (t, id, entry) => (entry.kind === 'value' && entry.value === 'huge' ? Promise.reject(new L2UnfitValueError(`${t}:${id}`, 'size', 'too large')) : store.set(t, id, entry)),
    nextVersion: store.nextVersion.bind(store),
    clear: store.clear.bind(store),
    close: store.close.bind(store),
  }
}

/** A table on `store`, with `inner` behind it, where another process wrote version 10 of `x`. */
async function tableOn(store: L2Store, inner: L2Store) {
  const clock = manualClock(0)
  const other = createTable<string>({ name: 'race', clock, l2: inner })
  await other.put('x', 'newer', { version: 10 })
  await other.close()
  return createTable<string>({ name: 'race', clock, l2: store, loadTimeout: 10_000 })
}

/** Lets L2's answer, just handed over, reach the table's L2 layer, but not the change waiting on it. */
const answerArrives = (): Promise<void> => Promise.resolve()

const change = (table: Awaited<ReturnType<typeof tableOn>>, op: 'put' | 'invalidate') => outcome(op === 'put' ? table.put('x', 'older', { version: 5 }) : table.invalidate('x', { version: 5 }))

describe('a put or invalidate whose L2 answer comes once the table is closing', () => {
  it.each(['put', 'invalidate'] as const)(
    '%s refused by L2 for its own version asks L2 nothing more once the table is closing (no read of what L2 holds); settles refused, not applied',
    async (op) => {
      const inner = memoryL2()
      const l2 = gatedL2(inner)
      const table = await tableOn(l2.store, inner)
      const origin = latchedLoader<string>()
      const flight = outcome(table.fetch('y', origin.loader)) // keeps the owner running while the table closes
      await settle()
      l2.hold('set')
      const changed = change(table, op)
      await settle()
      const closed = outcome(table.close())
      await settle()
      expect(closed.state).toBe('pending')
      const asked = l2.calls.length
      l2.release() // L2 refuses the change: it holds version 10
      await settle()
      expect(l2.calls.slice(asked)).toEqual([])
      origin.only().resolve('Y')
      await settle()
      expect([flight.state, closed.state, changed.state]).toEqual(['fulfilled', 'fulfilled', 'fulfilled'])
      expect(changed.value).toEqual({ applied: false, version: 5, l2: 'refused', broadcast: false })
    },
  )

  it.each(['put', 'invalidate'] as const)('%s refused by L2 as the table closes, with L2 reads stalled from then on, settles refused, not applied', async (op) => {
    const inner = memoryL2()
    const l2 = gatedL2(inner)
    const table = await tableOn(l2.store, inner)
    l2.hold('set')
    const changed = change(table, op)
    await settle()
    l2.stall('get') // an outage: no L2 read answers from now on
    l2.release() // L2 refuses the change...
    await answerArrives()
    const closed = outcome(table.close()) // ...and the table closes (no flight: its owner stops at once) before the change goes on
    for (let i = 0; i < 4; i++) await settle()
    expect([closed.state, changed.state]).toEqual(['fulfilled', 'fulfilled'])
    expect(changed.value).toEqual({ applied: false, version: 5, l2: 'refused', broadcast: false })
  })

  it('a put whose value L2 will not hold writes no tombstone in its place once the table is closing; settles with l2 failed (L2 may still hold the old entry)', async () => {
    const inner = memoryL2()
    const l2 = gatedL2(refusingHuge(inner))
    const table = await tableOn(l2.store, inner)
    const origin = latchedLoader<string>()
    const flight = outcome(table.fetch('y', origin.loader)) // keeps the owner running while the table closes
    await settle()
    l2.hold('set')
    const put = outcome(table.put('x', 'huge'))
    await settle()
    const closed = outcome(table.close())
    await settle()
    const asked = l2.calls.length
    l2.release() // L2 will not hold the value
    await settle()
    expect(l2.calls.slice(asked)).toEqual([])
    origin.only().resolve('Y')
    await settle()
    expect([flight.state, closed.state, put.state]).toEqual(['fulfilled', 'fulfilled', 'fulfilled'])
    expect(put.value).toMatchObject({ l2: 'failed' })
    expect(await inner.get('race', 'x')).toMatchObject({ value: 'newer', version: 10 })
  })

  it('a put whose value L2 will not hold, answered as the table closes with L2 writes stalled from then on, settles with l2 failed, not applied', async () => {
    const inner = memoryL2()
    const l2 = gatedL2(refusingHuge(inner))
    const table = await tableOn(l2.store, inner)
    l2.hold('set')
    const put = outcome(table.put('x', 'huge'))
    await settle()
    l2.release() // L2 will not hold the value...
    l2.stall('set') // (an outage: no L2 write answers from now on)
    await answerArrives()
    const closed = outcome(table.close()) // ...and the table closes (no flight: its owner stops at once) before the put goes on
    for (let i = 0; i < 4; i++) await settle()
    expect([closed.state, put.state]).toEqual(['fulfilled', 'fulfilled'])
    expect(put.value).toMatchObject({ applied: false, l2: 'failed', broadcast: false })
  })
})

describe('a clear made before close() in the same turn, on a table without L2', () => {
  it('drops this instance rows before it resolves (counted, told), and reaches the other instances', async () => {
    const clock = manualClock(0)
    const bus = localBus()
    const table = createTable<string>({ name: 'race', clock, bus })
    const other = createTable<string>({ name: 'race', clock, bus })
    await table.put('x', 'old')
    await other.fetch('x', () => 'old')
    const told: unknown[] = []
    table.events.on('clear', (event) => told.push(event))
    const cleared = outcome(table.clear())
    const closed = outcome(table.close())
    await settle()
    expect(closed.state).toBe('fulfilled')
    expect(cleared.state).toBe('fulfilled')
    expect(cleared.value).toEqual({ l2: 'none', broadcast: true })
    expect(table.peek('x')).toBeUndefined()
    expect(table.size).toBe(0)
    expect(table.stats().clears).toBe(1)
    expect(told).toHaveLength(1)
    expect(other.peek('x')).toBeUndefined()
    expect(other.stats().clears).toBe(1)
    await Promise.all([other.close(), bus.close()])
  })

  it('without a bus: resolves l2 none, broadcast false, once the rows are gone', async () => {
    const table = createTable<string>({ name: 'race', clock: manualClock(0) })
    await table.put('x', 'old')
    const cleared = outcome(table.clear())
    const closed = outcome(table.close())
    await settle()
    expect(closed.state).toBe('fulfilled')
    expect(cleared.value).toEqual({ l2: 'none', broadcast: false })
    expect(table.peek('x')).toBeUndefined()
    expect(table.stats().clears).toBe(1)
  })
})

describe('a clear whose L2 call is in progress when the table closes', () => {
  it('goes no further: settles l2 failed, not broadcast (no instance drops its rows for a clear this one did not apply)', async () => {
    const clock = manualClock(0)
    const bus = localBus()
    const inner = memoryL2({ clock })
    const l2 = gatedL2(inner)
    const table = createTable<string>({ name: 'race', clock, bus, l2: l2.store })
    const other = createTable<string>({ name: 'race', clock, bus, l2: inner })
    await table.put('x', 'old')
    await other.fetch('x', () => 'old')
    l2.hold('clear')
    const cleared = outcome(table.clear())
    await settle()
    expect(l2.calls).toContain('clear')
    const closed = outcome(table.close()) // no flight: the owner stops at once, while L2 moves
    await settle()
    l2.release()
    await settle()
    expect([closed.state, cleared.state]).toEqual(['fulfilled', 'fulfilled'])
    expect(cleared.value).toEqual({ l2: 'failed', broadcast: false })
    expect(other.peek('x')).toBe('old')
    expect(other.stats().clears).toBe(0)
    await Promise.all([other.close(), bus.close(), inner.close()])
  })
})
