/**
 * `table.events`: the events the README lists are emitted, each when what it names happens — a
 * `load` per loader call (one per flight, one per id of a batch), a `fill` saying where the answer
 * came from and whether it was stored, a `stale` of reason `backoff` while the fail-safe holds the
 * origin off, a `coherence` for a message applied or dropped, an `l2_error` for a failed L2 call.
 */
import { describe, expect, it } from 'vitest'
import { type Id, type TableEvents, createTable, localBus, memoryL2 } from '../src/index.js'
import { chaosL2, manualClock } from '../src/testing.js'
import { latchedBatchLoader, latchedLoader, settle } from './support/latch.js'

describe('table.events', () => {
  it('load: once per loader call, so a herd on one flight is one load; a batch call is one load per id', async () => {
    const clock = manualClock(0)
    const table = createTable<string, Id>({ name: 'ev', ttl: 10_000, jitter: 0, sweepInterval: 1e9, clock })
    const loads: TableEvents['load'][] = []
    table.events.on('load', (event) => loads.push(event))
    const origin = latchedLoader<string>()
    const herd = Array.from({ length: 3 }, () => table.fetch('k', origin.loader))
    await settle()
    origin.only().resolve('v')
    await Promise.all(herd)
    expect(loads).toEqual([{ table: 'ev', id: 'k' }])
    await table.fetch('k', origin.loader) // a hit: no load
    expect(loads).toHaveLength(1)
    const batch = latchedBatchLoader<string>()
    const page = table.fetchMany(['a', 'b', 'k'], batch.loader)
    await settle()
    batch.only().resolve(['A', 'B'])
    await page
    expect(loads).toEqual([
      { table: 'ev', id: 'k' },
      { table: 'ev', id: 'a' },
      { table: 'ev', id: 'b' },
    ])
    await table.close()
  })

  it('fill: source loader or l2, and stored false for a fenced flight', async () => {
    const clock = manualClock(0)
    const l2 = memoryL2({ clock })
    const options = { name: 'ev', ttl: 10_000, jitter: 0, sweepInterval: 1e9, clock, l2 }
    const writer = createTable<string, Id>(options)
    const reader = createTable<string, Id>(options)
    const fills: TableEvents['fill'][] = []
    writer.events.on('fill', (event) => fills.push(event))
    reader.events.on('fill', (event) => fills.push(event))
    await writer.fetch('k', () => 'from origin')
    expect(await reader.fetch('k', () => 'never')).toBe('from origin')
    const origin = latchedLoader<string>()
    const fenced = writer.fetch('f', origin.loader)
    await settle()
    await writer.invalidate('f')
    origin.only().resolve('old')
    expect(await fenced).toBe('old')
    expect(fills).toEqual([
      { table: 'ev', id: 'k', source: 'loader', stored: true },
      { table: 'ev', id: 'k', source: 'l2', stored: true },
      { table: 'ev', id: 'f', source: 'loader', stored: false },
    ])
    await Promise.all([writer.close(), reader.close(), l2.close()])
  })

  it("stale: reason 'backoff' for a fetch the fail-safe's back-off answers with the graced value", async () => {
    const clock = manualClock(0)
    const table = createTable<string, Id>({ name: 'ev', ttl: 1_000, jitter: 0, grace: 10_000, graceBackoff: 2_000, sweepInterval: 1e9, clock })
    const stale: TableEvents['stale'][] = []
    table.events.on('stale', (event) => stale.push(event))
    await table.fetch('k', () => 'v1')
    clock.set(1_500)
    expect(await table.fetch('k', () => Promise.reject(new Error('down')))).toBe('v1')
    clock.set(2_000)
    expect(await table.fetch('k', () => 'never asked')).toBe('v1')
    expect(stale).toEqual([
      { table: 'ev', id: 'k', callers: 1, staleness: 500, reason: 'failsafe' },
      { table: 'ev', id: 'k', callers: 1, staleness: 1_000, reason: 'backoff' },
    ])
    await table.close()
  })

  it('coherence: a message applied, and one dropped as older than what was held', async () => {
    const clock = manualClock(0)
    const bus = localBus()
    const table = createTable<string, Id>({ name: 'ev', ttl: 10_000, jitter: 0, sweepInterval: 1e9, clock, bus })
    const heard: TableEvents['coherence'][] = []
    table.events.on('coherence', (event) => heard.push(event))
    await table.fetch('k', (_id, { setVersion }) => (setVersion(10), 'v10'))
    await bus.publish({ table: 'ev', id: 'k', version: 5, kind: 'invalidate', origin: 'elsewhere' })
    await settle()
    expect(table.peek('k')).toBe('v10')
    await bus.publish({ table: 'ev', id: 'k', version: 11, kind: 'invalidate', origin: 'elsewhere' })
    await settle()
    expect(table.has('k')).toBe(false)
    expect(heard).toEqual([
      { table: 'ev', id: 'k', version: 5, kind: 'invalidate', applied: false },
      { table: 'ev', id: 'k', version: 11, kind: 'invalidate', applied: true },
    ])
    await table.close()
    await bus.close()
  })

  it('l2_error: an L2 call that fails is told, and the fetch is answered by the loader', async () => {
    const clock = manualClock(0)
    const l2 = chaosL2(memoryL2({ clock }), clock)
    const table = createTable<string, Id>({ name: 'ev', ttl: 10_000, jitter: 0, sweepInterval: 1e9, clock, l2 })
    const errors: TableEvents['l2_error'][] = []
    table.events.on('l2_error', (event) => errors.push(event))
    l2.fail('get', { kind: 'throw' })
    expect(await table.fetch('k', () => 'from origin')).toBe('from origin')
    expect(errors.length).toBeGreaterThanOrEqual(1)
    expect(errors[0]).toMatchObject({ table: 'ev', op: 'get', id: 'k' })
    l2.heal()
    await table.close()
  })
})
