/**
 * The diagnostics channels' contexts, as observability.md's channel table gives them, for the cases
 * the table spells out: a read refused before it reads (a `get`/`getMany` with no loader, a
 * `fetchMany` whose batch loader is not a function) publishes nothing on `echostore:fetch`; a batch
 * read's outcome is `miss`, else `coalesced`, else `stale`, else `negative` when all its ids hit
 * negative rows, else `hit`, with `stale` counting its graced answers; `echostore:load` in a
 * namespace names the keys, as events do, while `echostore:fetch` names the caller's ids;
 * `echostore:bus` publishes a clear it received.
 */
import { channel, tracingChannel } from 'node:diagnostics_channel'
import { afterEach, describe, expect, it } from 'vitest'
import { type TableEvents, createTable, localBus } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { settle } from './support/latch.js'

const EVENTS = ['start', 'end', 'asyncStart', 'asyncEnd', 'error'] as const
const stops: (() => void)[] = []
afterEach(() => stops.splice(0).forEach((stop) => stop()))

/** The contexts of `name` as they were at `start` and at `asyncEnd`. */
function recording(name: string) {
  const started: Record<string, unknown>[] = []
  const ended: Record<string, unknown>[] = []
  const handlers = Object.fromEntries(
    EVENTS.map((event) => [event, (context: object) => (event === 'start' ? started.push({ ...context }) : event === 'asyncEnd' ? ended.push({ ...context }) : undefined)]),
  ) as never
  tracingChannel(name).subscribe(handlers)
  stops.push(() => tracingChannel(name).unsubscribe(handlers))
  return { started, ended }
}

describe('echostore:fetch', () => {
  it('publishes nothing for a read refused before it reads', async () => {
    const table = createTable<string>({ name: 'refused' })
    const fetches = recording('echostore:fetch')
    await expect(table.get('a')).rejects.toThrow(TypeError)
    await expect(table.getMany(['a'])).rejects.toThrow(TypeError)
    await expect(table.fetchMany(['a'], 'not a function' as never)).rejects.toThrow(TypeError)
    expect(fetches.started).toEqual([])
    expect(fetches.ended).toEqual([])
    await table.close()
  })

  it("a batch read's outcome: negative when all its ids hit negative rows, hit when one of them hit a value, stale (with how many) when one got a graced value, miss when one started a flight", async () => {
    const clock = manualClock(0)
    const table = createTable<string | undefined>({ name: 'batch', clock, ttl: 1_000, jitter: 0, grace: 10_000, staleWhileRevalidate: true, negativeTtl: 100_000, sweepInterval: 1e9 })
    await table.fetchMany(['g1', 'g2'], (ids) => ids.map(String))
    clock.advance(1_500) // g1 and g2 expire into their grace
    await table.put('v', 'V')
    await table.fetchMany(['n1', 'n2'], (ids) => ids.map(() => undefined))
    const fetches = recording('echostore:fetch')
    const loader = (ids: readonly unknown[]) => ids.map((id) => `new ${String(id)}`)
    await table.fetchMany(['n1', 'n2'], loader)
    await table.fetchMany(['n1', 'v'], loader)
    await table.fetchMany(['v', 'g1', 'n1'], loader)
    await table.fetchMany(['g2', 'cold'], loader)
    await settle()
    expect(fetches.ended.map(({ ids, outcome, stale }) => ({ ids, outcome, stale }))).toEqual([
      { ids: ['n1', 'n2'], outcome: 'negative', stale: undefined },
      { ids: ['n1', 'v'], outcome: 'hit', stale: undefined },
      { ids: ['v', 'g1', 'n1'], outcome: 'stale', stale: 1 },
      { ids: ['g2', 'cold'], outcome: 'miss', stale: 1 },
    ])
    await table.close()
  })
})

describe('echostore:load in a namespace', () => {
  it("names the keys the events name; echostore:fetch names the caller's ids", async () => {
    const table = createTable<string>({ name: 'spaced' })
    const acme = table.namespace('acme')
    const loadEvents: TableEvents['load'][] = []
    table.events.on('load', (event) => loadEvents.push(event))
    const fetches = recording('echostore:fetch')
    const loads = recording('echostore:load')
    await acme.fetch('x', () => 'X')
    await acme.fetchMany(['y', 'z'], (ids) => ids.map(String))
    expect(fetches.started).toEqual([
      { table: 'spaced', id: 'x' },
      { table: 'spaced', ids: ['y', 'z'] },
    ])
    const key = loadEvents[0]!.id
    expect(key).not.toBe('x')
    expect(loads.started[0]).toEqual({ table: 'spaced', id: key })
    expect(loads.started[1]!.ids).toEqual(loadEvents.slice(1).map((event) => event.id))
    expect((loads.started[1]!.ids as unknown[]).every((id) => String(id).includes('acme'))).toBe(true)
    await table.close()
  })
})

describe('echostore:bus', () => {
  it('publishes a clear received from another instance', async () => {
    const bus = localBus()
    const a = createTable<string>({ name: 'cleared', bus })
    const b = createTable<string>({ name: 'cleared', bus })
    const seen: { table: string; type: string; message?: { kind?: string } }[] = []
    const listener = (message: unknown) => seen.push(message as never)
    channel('echostore:bus').subscribe(listener)
    stops.push(() => channel('echostore:bus').unsubscribe(listener))
    await a.clear()
    await settle()
    expect(seen.map((m) => [m.type, m.message?.kind])).toEqual(
      expect.arrayContaining([
        ['published', 'clear'],
        ['received', 'clear'],
      ]),
    )
    expect(seen.filter((m) => m.type === 'received')).toHaveLength(1)
    await Promise.all([a.close(), b.close()])
  })
})
