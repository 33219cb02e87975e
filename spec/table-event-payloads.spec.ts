/**
 * The payloads of a table's events, as observability.md's event table gives them: `load`
 * `{ table, id }`; `fill` `{ table, id, source, stored }` with `source` `loader` or `l2` and
 * `stored` false when a full table refused the answer; `coherence` `{ table, id, version, kind,
 * applied }` for a message applied and for one dropped as not newer; `error` with `id` undefined for
 * a clear whose broadcast failed, and with the id for a `sizeOf` that threw.
 */
import { describe, expect, it } from 'vitest'
import { type TableEvents, createTable, localBus, memoryL2 } from '../src/index.js'
import type { Bus } from '../src/store.js'
import { manualClock } from '../src/testing.js'
import { settle } from './support/latch.js'

describe('load and fill', () => {
  it('a load names the table and id; its fill says the loader answered and was stored; a fill from L2 says l2', async () => {
    const clock = manualClock(0)
    const l2 = memoryL2({ clock })
    const writer = createTable<string>({ name: 'filled', clock, l2, sweepInterval: 1e9 })
    const reader = createTable<string>({ name: 'filled', clock, l2, sweepInterval: 1e9 })
    const seen: [string, unknown][] = []
    for (const table of [writer, reader]) {
      table.events.on('load', (event) => seen.push(['load', event]))
      table.events.on('fill', (event) => seen.push(['fill', event]))
    }
    await writer.fetch('a', () => 'A')
    await reader.fetch('a', () => 'never')
    expect(seen).toEqual([
      ['load', { table: 'filled', id: 'a' }],
      ['fill', { table: 'filled', id: 'a', source: 'loader', stored: true }],
      ['fill', { table: 'filled', id: 'a', source: 'l2', stored: true }],
    ])
    await Promise.all([writer.close(), reader.close()])
  })

  it('a fill a full table refuses to admit is stored: false, and its caller still gets the value', async () => {
    const table = createTable<string>({ name: 'full', capacity: 2, clock: manualClock(0), sweepInterval: 1e9 })
    // Make the residents popular, so admission refuses a newcomer seen once.
    for (let i = 0; i < 8; i++) {
      await table.fetch('a', () => 'A')
      await table.fetch('b', () => 'B')
    }
    const fills: TableEvents['fill'][] = []
    table.events.on('fill', (event) => fills.push(event))
    expect(await table.fetch('new', () => 'N')).toBe('N')
    expect(table.stats().full_skips).toBe(1)
    expect(fills).toEqual([{ table: 'full', id: 'new', source: 'loader', stored: false }])
    await table.close()
  })
})

describe('coherence', () => {
  it('a message applied, and one dropped as not newer than the row held', async () => {
    const clock = manualClock(0)
    const bus = localBus()
    const writer = createTable<string>({ name: 'coh', clock, bus, sweepInterval: 1e9 })
    const reader = createTable<string>({ name: 'coh', clock, bus, sweepInterval: 1e9 })
    await reader.put('held', 'H', { version: 10 })
    const heard: TableEvents['coherence'][] = []
    reader.events.on('coherence', (event) => heard.push(event))
    await writer.put('k', 'K', { version: 4 })
    await writer.invalidate('held', { version: 3 })
    await settle()
    expect(heard).toEqual([
      { table: 'coh', id: 'k', version: 4, kind: 'put', applied: true },
      { table: 'coh', id: 'held', version: 3, kind: 'invalidate', applied: false },
    ])
    expect(reader.peek('held')).toBe('H')
    await Promise.all([writer.close(), reader.close()])
  })
})

describe('error', () => {
  it('a clear whose broadcast failed: id undefined; a sizeOf that threw: the id', async () => {
    const refusing: Bus = { publish: () => Promise.reject(new Error('bus down')), subscribe: () => () => {}, close: async () => {} }
    const table = createTable<string>({
      name: 'errs',
      clock: manualClock(0),
      sweepInterval: 1e9,
      bus: refusing,
      maxSize: 1_000,
      sizeOf: (value) => {
        if (value === 'heavy?') throw new Error('cannot weigh')
        return 1
      },
    })
    const errors: TableEvents['error'][] = []
    table.events.on('error', (event) => errors.push(event))
    expect(await table.clear()).toMatchObject({ broadcast: false })
    expect(await table.fetch('w', () => 'heavy?')).toBe('heavy?')
    expect(table.stats()).toMatchObject({ bus_errors: 1, sizeof_errors: 1 })
    expect(errors.map(({ table, id }) => ({ table, id }))).toEqual([
      { table: 'errs', id: undefined },
      { table: 'errs', id: 'w' },
    ])
    expect((errors[0]!.error as Error).message).toMatch(/bus down/)
    expect((errors[1]!.error as Error).message).toMatch(/cannot weigh/)
    await table.close()
  })
})
