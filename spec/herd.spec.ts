import { describe, expect, it } from 'vitest'
import { type Id, SelfFetchError, createTable } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { latchedLoader, settle } from './support/latch.js'

type Item = { id: string | number; n: number }

describe('a herd of cold readers coalesces onto one load', () => {
  it('200 concurrent cold readers → one loader call, 199 coalesced, one shared object', async () => {
    const table = createTable<Item | undefined, Id>({ name: 'emoji_sets', clock: manualClock() })
    const origin = latchedLoader<Item>()
    const readers = Array.from({ length: 200 }, () => table.fetch('party', origin.loader))
    await settle()
    expect(origin.calls).toHaveLength(1)
    const answer = { id: 'party', n: 1 }
    origin.only().resolve(answer)
    const values = await Promise.all(readers)
    for (const value of values) expect(value).toBe(answer)
    const stats = table.stats()
    expect(stats).toMatchObject({ misses: 200, coalesced: 199, flights: 1, loads: 1, fills: 1, inflight: 0, size: 1 })
    await table.close()
  })

  it('100 simultaneous same-id reads → one load, identical results; the next read is a hit', async () => {
    const table = createTable<Item | undefined, Id>({ clock: manualClock() })
    const origin = latchedLoader<Item>()
    const readers = Array.from({ length: 100 }, () => table.fetch(7, origin.loader))
    await settle()
    origin.only().resolve({ id: 7, n: 7 })
    const values = await Promise.all(readers)
    expect(new Set(values).size).toBe(1)
    expect(await table.fetch(7, origin.loader)).toBe(values[0])
    expect(origin.calls).toHaveLength(1)
    expect(table.stats()).toMatchObject({ hits: 1, misses: 100, coalesced: 99, loads: 1 })
    await table.close()
  })

  it('100 ids × 10 readers → 100 loads; no flight is shared across ids or across two tables', async () => {
    const clock = manualClock()
    const tables = [createTable<Item | undefined, Id>({ name: 'a', clock }), createTable<Item | undefined, Id>({ name: 'b', clock })]
    const origins = tables.map(() => latchedLoader<Item>())
    const reads: { table: number; id: number; answer: Promise<Item | undefined> }[] = []
    for (let reader = 0; reader < 10; reader++) {
      for (let id = 0; id < 100; id++) {
        for (let t = 0; t < 2; t++) reads.push({ table: t, id, answer: tables[t]!.fetch(id, origins[t]!.loader) })
      }
    }
    await settle()
    for (const [t, origin] of origins.entries()) {
      expect(origin.calls).toHaveLength(100)
      expect(new Set(origin.calls.map((call) => call.id)).size).toBe(100)
      for (const call of origin.calls) call.resolve({ id: call.id, n: t })
    }
    for (const read of reads) {
      const value = await read.answer
      expect(value).toEqual({ id: read.id, n: read.table })
    }
    for (const table of tables) {
      expect(table.stats()).toMatchObject({ misses: 1000, flights: 100, coalesced: 900, loads: 100, fills: 100, inflight: 0 })
      await table.close()
    }
  })

  it('1 and "1" are different ids: two flights, two rows', async () => {
    const table = createTable<Item | undefined, Id>({ clock: manualClock() })
    const origin = latchedLoader<Item>()
    const number = table.fetch(1, origin.loader)
    const string = table.fetch('1', origin.loader)
    await settle()
    expect(origin.calls.map((call) => call.id)).toEqual([1, '1'])
    origin.calls[0]!.resolve({ id: 1, n: 1 })
    origin.calls[1]!.resolve({ id: '1', n: 2 })
    expect(await number).toEqual({ id: 1, n: 1 })
    expect(await string).toEqual({ id: '1', n: 2 })
    expect(table.stats().size).toBe(2)
    await table.close()
  })

  it('the first miss starts its loader within the same turn, a microtask later: after one await a test can move a manual clock', async () => {
    const table = createTable<string | undefined, Id>({ clock: manualClock() })
    let called = false
    void table.fetch('k', () => ((called = true), 'v'))
    expect(called).toBe(false) // the miss waits for the turn's batch
    await Promise.resolve()
    expect(called).toBe(true)
    expect(table.stats().inflight).toBe(1)
    await table.close()
  })

  it('only the first caller’s loader runs; the joiners’ loaders are never called', async () => {
    const table = createTable<string | undefined, Id>({ clock: manualClock() })
    const first = latchedLoader<string>()
    const second = latchedLoader<string>()
    const a = table.fetch('k', first.loader)
    const b = table.fetch('k', second.loader)
    await settle()
    expect(first.calls).toHaveLength(1)
    expect(second.calls).toHaveLength(0)
    first.only().resolve('v')
    expect(await Promise.all([a, b])).toEqual(['v', 'v'])
    await table.close()
  })

  it('a hit answers without a message: a loader that re-enters fetch is served a hit, and refused its own id at once', async () => {
    const table = createTable<string | undefined, Id>({ clock: manualClock() })
    await table.put('warm', 'w')
    const inner: Promise<string | undefined>[] = []
    const value = await table.fetch('cold', () => {
      inner.push(
        table.fetch('warm', () => 'never'),
        table.fetch('cold', () => 'never'),
      )
      return 'c'
    })
    expect(value).toBe('c')
    expect(await inner[0]).toBe('w')
    await expect(inner[1]).rejects.toBeInstanceOf(SelfFetchError)
    await expect(inner[1]).rejects.toMatchObject({ code: 'ECHOSTORE_SELF_FETCH', table: 'table', id: 'cold' })
    expect(table.stats()).toMatchObject({ hits: 1, misses: 1, coalesced: 0, loads: 1 })
    await table.close()
  })
})
