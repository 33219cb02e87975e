/**
 * `echostore/otel` against the OpenTelemetry SDK's in-memory span exporter and metric reader: the
 * span tree of a herd (one load, one flight span serving every caller, N fetch outcomes), of an L2
 * failure and of a lease wait; Redis spans with the `db.*` attributes; ids only with `recordIds`;
 * metrics without ids; `uninstall()` leaves no subscriber behind.
 */
import { channel, tracingChannel } from 'node:diagnostics_channel'
import { DiagLogLevel, SpanKind, SpanStatusCode, diag, trace } from '@opentelemetry/api'
import { Redis } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { EchoStoreError, type Id, MissingPeerDependencyError, createTable, localBus, memoryL2 } from '../src/index.js'
import { METRIC_NAMES, instrument } from '../src/otel.js'
import { redisL2 } from '../src/redis.js'
import { chaosL2, manualClock } from '../src/testing.js'
import { fetchChannel, l2Channel, loadChannel, observed } from '../src/core/channels.js'
import { requireOtelApi } from '../src/otel/require-api.js'
import { latchedLoader, outcome, settle } from './support/latch.js'
import { type Point, byId, named, parentOf, instrumentEachTest } from './support/otel.js'
import { REDIS_URL, cleanPrefix, describeRedis, testPrefix } from './support/redis.js'

const otel = instrumentEachTest()
/** A counter's points as `{ <attribute value>: value }` for one attribute. */
function by(points: Point[], attribute: string): Record<string, unknown> {
  return Object.fromEntries(points.map((p) => [String(p.attributes[attribute]), p.value]))
}

describe('the span tree of a herd', () => {
  it('one flight span (the caller that started it: outcome miss, waiters N) holding the one load and the L2 calls; the others coalesced, each in its own request, linked to it', async () => {
    const users = createTable<{ name: string }>({ name: 'users', l2: memoryL2() })
    const origin = latchedLoader<{ name: string }>()
    const herd = Array.from({ length: 5 }, (_, i) => outcome(otel.request(`request ${i}`, () => users.fetch('ada', origin.loader))))
    await settle()
    origin.only().resolve({ name: 'Ada' })
    for (let i = 0; i < 3; i++) await settle()
    expect(herd.every((caller) => caller.state === 'fulfilled')).toBe(true)

    const spans = await otel.sdk.spans()
    const fetches = named(spans, 'echostore.fetch')
    expect(named(spans, 'echostore.load')).toHaveLength(1)
    expect(fetches.map((s) => s.attributes['echostore.outcome']).sort()).toEqual(['coalesced', 'coalesced', 'coalesced', 'coalesced', 'miss'])
    const flight = fetches.find((s) => s.attributes['echostore.outcome'] === 'miss')!
    expect(flight.attributes).toEqual({ 'echostore.table': 'users', 'echostore.outcome': 'miss', 'echostore.waiters': 5 })
    expect(byId(spans, parentOf(flight))!.name).toBe('request 0')
    const [load] = named(spans, 'echostore.load')
    expect(parentOf(load!)).toBe(flight.spanContext().spanId)
    const l2 = named(spans, 'echostore.l2')
    expect(l2.map((s) => s.attributes['echostore.l2.op'])).toEqual(['get', 'set'])
    expect(l2.every((s) => parentOf(s) === flight.spanContext().spanId)).toBe(true)
    for (const joined of fetches.filter((s) => s !== flight)) {
      expect(byId(spans, parentOf(joined))!.name).toMatch(/^request [1-4]$/)
      expect(joined.links.map((link) => link.context.spanId)).toEqual([flight.spanContext().spanId])
      expect(joined.attributes['echostore.waiters']).toBeUndefined()
    }
    // Every span of the herd belongs to the trace of the request it served.
    expect(new Set(spans.map((s) => s.spanContext().traceId)).size).toBe(5)

    expect(by(await otel.sdk.points(METRIC_NAMES.fetches), 'echostore.outcome')).toEqual({ miss: 1, coalesced: 4 })
    const [loads] = await otel.sdk.points(METRIC_NAMES.loadDuration)
    expect(loads).toMatchObject({ attributes: { 'echostore.table': 'users' }, value: { count: 1 } })
    await users.close()
  })

  it('hits make no span, only fetch outcomes', async () => {
    const users = createTable<string>({ name: 'users' })
    await users.put('ada', 'Ada')
    await users.put('nobody', undefined as never)
    await otel.request('hits', async () => [await users.fetch('ada', () => 'x'), await users.fetch('nobody', () => 'x')])
    expect((await otel.sdk.spans()).map((s) => s.name)).toEqual(['hits'])
    expect(by(await otel.sdk.points(METRIC_NAMES.fetches), 'echostore.outcome')).toEqual({ hit: 1, negative: 1 })
    await users.close()
  })

  it('stale answers count each graced answer, a batch read\u2019s ids one by one, as stale_hits does', async () => {
    const clock = manualClock(0)
    const table = createTable<string>({ name: 'sa', ttl: 1_000, jitter: 0, grace: 10_000, staleWhileRevalidate: true, clock, sweepInterval: 1e9, loader: (id) => `v-${String(id)}` })
    await table.getMany(['a', 'b', 'c'])
    clock.advance(1_500)
    await table.getMany(['a', 'b']) // two graced answers
    await table.getMany(['c', 'z']) // one graced answer and a miss
    await settle()
    expect(table.stats().stale_hits).toBe(3)
    expect(by(await otel.sdk.points(METRIC_NAMES.staleAnswers), 'echostore.table')).toEqual({ sa: 3 })
    await table.close()
  })

  it('stale answers count the graced ids of a batch read that failed, as stale_hits does', async () => {
    const clock = manualClock(0)
    const table = createTable<string>({ name: 'sf', ttl: 30, jitter: 0, grace: 1_000, clock, sweepInterval: 1e9 })
    await table.fetchMany(['a'], (ids) => ids.map(() => 'old a'))
    clock.advance(40) // a expired, within its grace
    let fail!: (error: unknown) => void
    const read = table.fetchMany(['a', 'c'], () => new Promise<string[]>((_, reject) => (fail = reject)))
    await settle()
    fail(new Error('origin down')) // a: the fail-safe answers its graced value; c has none, and fails the read
    await expect(read).rejects.toThrow('origin down')
    await settle()
    expect(table.stats()).toMatchObject({ stale_hits: 1, failsafe: 1 })
    expect(by(await otel.sdk.points(METRIC_NAMES.staleAnswers), 'echostore.table')).toEqual({ sf: 1 })
    await table.close()
  })

  it('a read of no ids is a hit: no span, one hit outcome each', async () => {
    const users = createTable<string>({ name: 'users', batchLoader: (ids) => ids.map(String) })
    expect(await users.getMany([])).toEqual([])
    expect(await users.fetchMany([], (ids) => ids.map(String))).toEqual([])
    expect(await otel.sdk.spans()).toEqual([])
    expect(by(await otel.sdk.points(METRIC_NAMES.fetches), 'echostore.outcome')).toEqual({ hit: 2 })
    await users.close()
  })

  it('a subscriber that reads the table as it hears of a fetch loses no span of it', async () => {
    // The application's own subscriber, heard before the instrumentation: it reads a live row (a traced fetch of its own).
    otel.installed.uninstall()
    const users = createTable<string>({ name: 'users', clock: manualClock() })
    await users.put('warm', 'w')
    const mine = { asyncStart: (context: { id?: unknown }) => void (context.id === 'ada' && users.fetch('warm', () => 'x')) }
    tracingChannel('echostore:fetch').subscribe(mine as never)
    try {
      otel.installed = instrument({ tracerProvider: otel.sdk.tracerProvider, meterProvider: otel.sdk.meterProvider })
      const origin = latchedLoader<string>()
      const read = users.fetch('ada', origin.loader)
      await settle()
      origin.only().resolve('Ada')
      expect(await read).toBe('Ada')
      await settle()
      const spans = await otel.sdk.spans()
      expect(spans.map((span) => `${span.name}(${span.attributes['echostore.outcome'] ?? ''})`).sort()).toEqual(['echostore.fetch(miss)', 'echostore.load()'])
      expect(parentOf(named(spans, 'echostore.load')[0]!)).toBe(named(spans, 'echostore.fetch')[0]!.spanContext().spanId)
    } finally {
      tracingChannel('echostore:fetch').unsubscribe(mine as never)
    }
    await users.close()
  })

  it('a fetch made by a loader is a child of that loader span', async () => {
    const teams = createTable<string>({ name: 'teams' })
    const users = createTable<string>({ name: 'users' })
    await otel.request('page', () => users.fetch('ada', async () => `Ada of ${await teams.fetch('red', () => 'Red')}`))
    const spans = await otel.sdk.spans()
    const inner = named(spans, 'echostore.fetch').find((s) => s.attributes['echostore.table'] === 'teams')!
    const load = named(spans, 'echostore.load').find((s) => s.attributes['echostore.table'] === 'users')!
    expect(parentOf(inner)).toBe(load.spanContext().spanId)
    await Promise.all([teams.close(), users.close()])
  })
})

describe('a batch read', () => {
  it('is one fetch span holding its one batch load span; a fetch that joined one of its flights links to it', async () => {
    const users = createTable<string>({ name: 'users' })
    let answer: ((values: string[]) => void) | undefined
    const batchLoader = () => new Promise<string[]>((resolve) => (answer = resolve)) // one call, answered by the test
    const batch = outcome(otel.request('page', () => users.fetchMany(['ada', 'bob'], batchLoader)))
    const single = outcome(otel.request('widget', () => users.fetch('bob', () => 'never')))
    await settle()
    answer!(['Ada', 'Bob'])
    for (let i = 0; i < 3; i++) await settle()
    expect([batch.value, single.value]).toEqual([['Ada', 'Bob'], 'Bob'])
    const spans = await otel.sdk.spans()
    const [many, joined] = ['page', 'widget'].map((name) => named(spans, 'echostore.fetch').find((s) => byId(spans, parentOf(s))!.name === name)!)
    expect(many!.attributes['echostore.outcome']).toBe('miss')
    expect(joined!.attributes['echostore.outcome']).toBe('coalesced')
    expect(joined!.links.map((link) => link.context.spanId)).toEqual([many!.spanContext().spanId])
    const loads = named(spans, 'echostore.load')
    expect(loads).toHaveLength(1)
    expect(parentOf(loads[0]!)).toBe(many!.spanContext().spanId)
    await users.close()
  })
})

describe('an L2 failure', () => {
  it('is an L2 span with an error status and error.type under the flight span; the fetch still loads and answers', async () => {
    const l2 = chaosL2(memoryL2())
    const users = createTable<string>({ name: 'users', l2 })
    l2.fail('get', { kind: 'throw' }, { times: 1 })
    expect(await otel.request('request', () => users.fetch('ada', () => 'Ada'))).toBe('Ada')
    await settle()
    const spans = await otel.sdk.spans()
    const [flight] = named(spans, 'echostore.fetch')
    const [get, set] = named(spans, 'echostore.l2')
    expect(get!.attributes).toMatchObject({ 'echostore.l2.op': 'get', 'error.type': 'ECHOSTORE_CHAOS' })
    expect(get!.status.code).toBe(SpanStatusCode.ERROR)
    expect(get!.events.map((e) => e.name)).toEqual(['exception'])
    expect(set!.status.code).toBe(SpanStatusCode.UNSET)
    expect(parentOf(get!)).toBe(flight!.spanContext().spanId)
    expect(flight!.attributes['echostore.outcome']).toBe('miss')
    expect(flight!.status.code).toBe(SpanStatusCode.UNSET)
    expect(named(spans, 'echostore.load')).toHaveLength(1)
    const durations = await otel.sdk.points(METRIC_NAMES.l2Duration)
    expect(durations.map((p) => p.attributes).sort((a, b) => String(a['echostore.l2.op']).localeCompare(String(b['echostore.l2.op'])))).toEqual([
      { 'echostore.table': 'users', 'echostore.l2.op': 'get', 'error.type': 'ECHOSTORE_CHAOS' },
      { 'echostore.table': 'users', 'echostore.l2.op': 'set' },
    ])
    await users.close()
  })

  it('a loader error ends the flight span and the load span with an error status', async () => {
    const users = createTable<string>({ name: 'users' })
    await expect(otel.request('request', () => users.fetch('ada', () => Promise.reject(new RangeError('bad row'))))).rejects.toThrow('bad row')
    const spans = await otel.sdk.spans()
    for (const span of [...named(spans, 'echostore.fetch'), ...named(spans, 'echostore.load')]) {
      expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'bad row' })
      expect(span.attributes['error.type']).toBe('RangeError')
    }
    expect(named(spans, 'echostore.fetch')[0]!.attributes['echostore.outcome']).toBe('error')
    await users.close()
  })
})

describe('a lease wait', () => {
  it('the waiting process: a flight span with L2 reads and a busy lease, and no load; lease outcomes count one acquired, one busy', async () => {
    const clock = manualClock(0)
    const store = memoryL2({ clock })
    const bus = localBus()
    const options = { name: 'catalog', ttl: 60_000, jitter: 0, clock, l2: store, bus, lease: true } as const
    const holder = createTable<string>(options)
    const waiter = createTable<string>(options)
    const origin = latchedLoader<string>()
    const first = outcome(otel.request('holder request', () => holder.fetch('hot', origin.loader)))
    await settle()
    await settle()
    const second = outcome(otel.request('waiter request', () => waiter.fetch('hot', origin.loader)))
    await settle()
    origin.only().resolve('filled once')
    for (let i = 0; i < 5; i++) await settle()
    expect([first.value, second.value]).toEqual(['filled once', 'filled once'])

    const spans = await otel.sdk.spans()
    const root = spans.find((s) => s.name === 'waiter request')!
    const inTrace = spans.filter((s) => s.spanContext().traceId === root.spanContext().traceId)
    const [flight] = named(inTrace, 'echostore.fetch')
    expect(flight!.attributes).toMatchObject({ 'echostore.outcome': 'miss', 'echostore.waiters': 1 })
    expect(named(inTrace, 'echostore.load')).toHaveLength(0)
    const ops = named(inTrace, 'echostore.l2').map((s) => s.attributes['echostore.l2.op'])
    expect(ops).toEqual(['leases.readOrAcquire', 'leases.readOrAcquire']) // the read with the lease (busy), then the look that finds the fill (no lease asked)
    expect(named(inTrace, 'echostore.l2').every((s) => parentOf(s) === flight!.spanContext().spanId)).toBe(true)
    expect(by(await otel.sdk.points(METRIC_NAMES.leases), 'echostore.lease.outcome')).toEqual({ acquired: 1, busy: 1 })
    await Promise.all([holder.close(), waiter.close()])
  })
})

describe('ids', () => {
  it('go on spans only with recordIds: true, and never on metrics', async () => {
    otel.installed.uninstall()
    otel.installed = instrument({ tracerProvider: otel.sdk.tracerProvider, meterProvider: otel.sdk.meterProvider, recordIds: true })
    const users = createTable<string, Id>({ name: 'users' })
    await users.fetch('ada', () => 'Ada')
    await users.fetchMany(['ada', 7, 'cy'], (ids) => ids.map(String))
    await expect(users.fetchMany('nope' as never, () => [])).rejects.toThrow(TypeError) // what was passed, as it was
    otel.installed.uninstall()
    otel.installed = instrument({ tracerProvider: otel.sdk.tracerProvider, meterProvider: otel.sdk.meterProvider })
    await users.fetch(42, () => 'Bob')
    const spans = await otel.sdk.spans()
    expect(named(spans, 'echostore.fetch').map((s) => s.attributes['echostore.id'] ?? s.attributes['echostore.ids'])).toEqual(['ada', ['ada', '7', 'cy'], 'nope', undefined])
    expect(named(spans, 'echostore.load').map((s) => s.attributes['echostore.id'] ?? s.attributes['echostore.ids'])).toEqual(['ada', ['7', 'cy'], undefined])
    for (const name of Object.values(METRIC_NAMES)) {
      for (const point of await otel.sdk.points(name)) expect(Object.keys(point.attributes).filter((key) => key.includes('id'))).toEqual([])
    }
    await users.close()
  })
})

describeRedis('Redis spans', () => {
  it('are client spans with the db.* and server.* attributes of the semantic conventions', async () => {
    const prefix = testPrefix('otel')
    const l2 = redisL2({ url: REDIS_URL, prefix })
    const users = createTable<string>({ name: 'users', l2 })
    await otel.request('request', () => users.fetch('ada', () => 'Ada'))
    const { hostname, port } = new URL(REDIS_URL)
    const [get] = named(await otel.sdk.spans(), 'echostore.l2')
    expect(get!.kind).toBe(SpanKind.CLIENT)
    expect(get!.attributes).toEqual({
      'echostore.table': 'users',
      'echostore.l2.op': 'get',
      'db.system.name': 'redis',
      'db.operation.name': 'get',
      'server.address': hostname,
      'server.port': Number(port || 6379),
    })
    await users.close()
    await l2.close()
    const client = new Redis(REDIS_URL)
    await cleanPrefix(client, prefix)
    client.disconnect()
  })
})

describe('instrument() and uninstall()', () => {
  it('uninstall() leaves no subscriber behind on any channel, and is idempotent', async () => {
    const parts = [fetchChannel, loadChannel, l2Channel].flatMap((c) => [c.start, c.end, c.asyncStart, c.asyncEnd, c.error])
    expect(observed(fetchChannel) && observed(loadChannel) && observed(l2Channel)).toBe(true)
    const second = instrument({ tracerProvider: otel.sdk.tracerProvider, meterProvider: otel.sdk.meterProvider })
    otel.installed.uninstall()
    expect(observed(fetchChannel)).toBe(true) // the second one still listens
    second.uninstall()
    second.uninstall()
    expect(parts.map((part) => part.hasSubscribers)).toEqual(parts.map(() => false))
    expect(channel('echostore:bus').hasSubscribers).toBe(false)
    const users = createTable<string>({ name: 'users' })
    await users.fetch('ada', () => 'Ada')
    expect(await otel.sdk.spans()).toEqual([])
    await users.close()
  })

  it('uses the global providers by default', async () => {
    otel.installed.uninstall()
    trace.setGlobalTracerProvider(otel.sdk.tracerProvider)
    otel.installed = instrument()
    const users = createTable<string>({ name: 'users' })
    await users.fetch('ada', () => 'Ada')
    expect(named(await otel.sdk.spans(), 'echostore.fetch')).toHaveLength(1)
    trace.disable()
    await users.close()
  })

  it("a tracer that throws never reaches the table: the fetch answers, and OpenTelemetry's diag logger hears of it", async () => {
    otel.installed.uninstall()
    const broken = {
      getTracer: () => ({
        startSpan: () => {
          throw new Error('exporter exploded')
        },
        startActiveSpan: () => {
          throw new Error('no')
        },
      }),
    }
    const heard: unknown[] = []
    diag.setLogger({ error: (...args: unknown[]) => heard.push(args), warn: () => {}, info: () => {}, debug: () => {}, verbose: () => {} }, DiagLogLevel.ERROR)
    otel.installed = instrument({ tracerProvider: broken as never, meterProvider: otel.sdk.meterProvider, recordIds: true })
    const users = createTable<string>({ name: 'users' })
    expect(await users.fetch('ada', () => 'Ada')).toBe('Ada')
    await expect(users.fetchMany('not an array' as never, () => [])).rejects.toThrow(TypeError)
    expect(heard.length).toBeGreaterThan(0)
    expect(String((heard[0] as unknown[])[0])).toMatch(/^echostore\/otel: a span or metric could not be recorded/)
    diag.disable()
    await users.close()
  })

  it('refuses bad options naming them', () => {
    expect(() => instrument({ tracerProvider: 5 as never })).toThrow(/option "tracerProvider" must be an OpenTelemetry TracerProvider, got 5/)
    expect(() => instrument({ meterProvider: {} as never })).toThrow(TypeError)
    expect(() => instrument({ recordIds: 'yes' as never })).toThrow(/option "recordIds" must be a boolean/)
    expect(() => instrument({ recordId: true } as never)).toThrow(/unknown option "recordId"/)
    expect(() => instrument(null as never)).toThrow(TypeError)
  })

  it('without @opentelemetry/api installed: a MissingPeerDependencyError naming the install command', () => {
    const load = () => {
      throw Object.assign(new Error(`Cannot find module '@opentelemetry/api'`), { code: 'MODULE_NOT_FOUND' })
    }
    let thrown: unknown
    try {
      requireOtelApi(load)
    } catch (error) {
      thrown = error
    }
    expect(thrown).toBeInstanceOf(MissingPeerDependencyError)
    expect(thrown).toBeInstanceOf(EchoStoreError)
    expect(thrown).toMatchObject({ dependency: '@opentelemetry/api', entry: 'echostore/otel', code: 'ECHOSTORE_PEER_MISSING' })
    expect((thrown as Error).message).toMatch(/^echostore: echostore\/otel needs @opentelemetry\/api, which is not installed: run `npm install @opentelemetry\/api@1`/)
  })
})
