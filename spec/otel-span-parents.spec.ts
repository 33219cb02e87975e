/**
 * Where `echostore/otel` hangs its spans, as observability.md's span table says: a
 * stale-while-revalidate refresh's load is a child of the span active where the refresh was handed
 * to the owner; the L2 calls of `put`, `invalidate`, `clear` and `invalidateTags` are children of
 * the caller's span; what a loader does itself belongs to the trace of the fetch that started the
 * flight; `echostore.waiters` counts a caller that left by its timeout; a failed fetch carries an
 * `exception` event.
 */
import { SpanStatusCode } from '@opentelemetry/api'
import { describe, expect, it } from 'vitest'
import { FetchTimeoutError, createTable, memoryL2 } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { advanceSettled, latchedLoader, outcome, settle } from './support/latch.js'
import { byId, named, parentOf, instrumentEachTest } from './support/otel.js'

const otel = instrumentEachTest()

describe('a stale-while-revalidate refresh', () => {
  it('has no flight span (the stale caller has its own, outcome stale); its load is a child of the span active where the stale read handed it to the owner', async () => {
    const clock = manualClock(0)
    const table = createTable<string>({ name: 'swr', clock, ttl: 1_000, jitter: 0, grace: 10_000, staleWhileRevalidate: true, sweepInterval: 1e9 })
    await otel.request('warm', () => table.fetch('a', () => 'old'))
    clock.advance(1_500)
    const origin = latchedLoader<string>()
    expect(await otel.request('stale read', () => table.fetch('a', origin.loader))).toBe('old')
    await settle()
    origin.only().resolve('new')
    for (let i = 0; i < 3; i++) await settle()
    const spans = await otel.sdk.spans()
    const stale = spans.find((s) => s.name === 'stale read')!
    const inTrace = spans.filter((s) => s.spanContext().traceId === stale.spanContext().traceId)
    // The stale caller's own fetch span (outcome stale), and no flight span for the refresh.
    expect(named(inTrace, 'echostore.fetch').map((s) => s.attributes['echostore.outcome'])).toEqual(['stale'])
    const loads = named(inTrace, 'echostore.load')
    expect(loads).toHaveLength(1)
    expect(parentOf(loads[0]!)).toBe(stale.spanContext().spanId)
    await table.close()
  })
})

describe("the L2 calls of a change are children of the caller's span", () => {
  it('put, invalidate, clear and invalidateTags', async () => {
    const table = createTable<string>({ name: 'changes', l2: memoryL2() })
    await otel.request('put', () => table.put('a', 'A'))
    await otel.request('invalidate', () => table.invalidate('a'))
    await otel.request('invalidateTags', () => table.invalidateTags(['t']))
    await otel.request('clear', () => table.clear())
    const spans = await otel.sdk.spans()
    const l2 = named(spans, 'echostore.l2')
    for (const caller of ['put', 'invalidate', 'invalidateTags', 'clear']) {
      const ops = l2.filter((s) => byId(spans, parentOf(s))?.name === caller).map((s) => s.attributes['echostore.l2.op'])
      expect(ops.length, caller).toBeGreaterThan(0)
    }
    expect(l2.every((s) => ['put', 'invalidate', 'invalidateTags', 'clear'].includes(byId(spans, parentOf(s))?.name ?? ''))).toBe(true)
    expect(l2.filter((s) => byId(spans, parentOf(s))?.name === 'clear').map((s) => s.attributes['echostore.l2.op'])).toContain('clear')
    expect(l2.filter((s) => byId(spans, parentOf(s))?.name === 'invalidateTags').map((s) => s.attributes['echostore.l2.op'])).toContain('invalidateTags')
    await table.close()
  })
})

describe('what a loader does itself', () => {
  it("belongs to the trace of the fetch that started the flight, as a child of that request's span", async () => {
    const table = createTable<string>({ name: 'users' })
    let answer!: (value: string) => void
    const loader = () => {
      const own = otel.tracer.startSpan('db query') // parented on the active context where the loader runs
      return new Promise<string>((resolve) => (answer = resolve)).finally(() => own.end())
    }
    const first = outcome(otel.request('request 1', () => table.fetch('ada', loader)))
    await settle()
    const second = outcome(otel.request('request 2', () => table.fetch('ada', loader)))
    await settle()
    answer('Ada')
    for (let i = 0; i < 3; i++) await settle()
    expect([first.value, second.value]).toEqual(['Ada', 'Ada'])
    const spans = await otel.sdk.spans()
    const [db] = named(spans, 'db query')
    const starter = spans.find((s) => s.name === 'request 1')!
    expect(db!.spanContext().traceId).toBe(starter.spanContext().traceId)
    expect(parentOf(db!)).toBe(starter.spanContext().spanId)
    await table.close()
  })
})

describe('the flight span', () => {
  it('counts in echostore.waiters a caller that left early by its timeout', async () => {
    const clock = manualClock(0)
    const table = createTable<string>({ name: 'waiters', clock, sweepInterval: 1e9 })
    const origin = latchedLoader<string>()
    const starter = outcome(otel.request('starter', () => table.fetch('a', origin.loader)))
    const impatient = outcome(otel.request('impatient', () => table.fetch('a', origin.loader, { timeout: 10 })))
    await settle()
    await advanceSettled(clock, 10)
    expect(impatient.error).toBeInstanceOf(FetchTimeoutError)
    origin.only().resolve('A')
    for (let i = 0; i < 3; i++) await settle()
    expect(starter.value).toBe('A')
    const spans = await otel.sdk.spans()
    const flight = named(spans, 'echostore.fetch').find((s) => s.attributes['echostore.outcome'] === 'miss')!
    expect(flight.attributes['echostore.waiters']).toBe(2)
    await table.close()
  })

  it('of a failed fetch has an error status, error.type and an exception event', async () => {
    const table = createTable<string>({ name: 'failing' })
    await expect(otel.request('r', () => table.fetch('a', () => Promise.reject(new TypeError('bad'))))).rejects.toThrow('bad')
    const [fetch] = named(await otel.sdk.spans(), 'echostore.fetch')
    expect(fetch!.status.code).toBe(SpanStatusCode.ERROR)
    expect(fetch!.attributes['error.type']).toBe('TypeError')
    expect(fetch!.events.map((e) => e.name)).toEqual(['exception'])
    await table.close()
  })
})
