/**
 * `echostore/otel`'s names, as observability.md's tables give them: the tracer and the meter are
 * both `echostore`; the five instruments carry their documented names, kinds and units; a failed
 * load's duration carries `error.type`; a lease call that fails counts `failed`, and a batch's one
 * lease call counts each of its ids.
 */
import { DataPointType } from '@opentelemetry/sdk-metrics'
import { describe, expect, it } from 'vitest'
import { type Id, createTable, localBus, memoryL2 } from '../src/index.js'
import { chaosL2, manualClock } from '../src/testing.js'
import { latchedBatchLoader, latchedLoader, settle } from './support/latch.js'
import { instrumentEachTest } from './support/otel.js'

const otel = instrumentEachTest()

/** `{ <outcome>: count }` of `echostore.leases`. */
async function leaseOutcomes(): Promise<Record<string, number>> {
  const metric = (await otel.sdk.scopes()).flatMap((s) => s.metrics).find((m) => m.descriptor.name === 'echostore.leases')
  return Object.fromEntries((metric?.dataPoints ?? []).map((p) => [String(p.attributes['echostore.lease.outcome']), p.value as number]))
}

describe('the names echostore/otel records under', () => {
  it('spans come from the tracer "echostore", metrics from the meter "echostore", under the five documented instruments', async () => {
    const clock = manualClock(0)
    const store = memoryL2({ clock })
    const table = createTable<string>({ name: 'names', clock, ttl: 1_000, jitter: 0, grace: 10_000, staleWhileRevalidate: true, l2: store, bus: localBus(), lease: true, sweepInterval: 1e9 })
    await table.fetch('a', () => 'A')
    clock.advance(1_500)
    await table.fetch('a', () => 'A again') // a graced answer
    await settle()
    await settle()

    const finished = await otel.sdk.spans()
    expect(finished.length).toBeGreaterThan(0)
    expect(new Set(finished.map((s) => s.instrumentationScope.name))).toEqual(new Set(['echostore']))

    const recorded = await otel.sdk.scopes()
    expect(recorded.map((s) => s.scope.name)).toEqual(['echostore'])
    const descriptors = Object.fromEntries(recorded[0]!.metrics.map((m) => [m.descriptor.name, { type: m.dataPointType, unit: m.descriptor.unit }]))
    expect(descriptors).toMatchObject({
      'echostore.fetches': { type: DataPointType.SUM },
      'echostore.stale_answers': { type: DataPointType.SUM },
      'echostore.load.duration': { type: DataPointType.HISTOGRAM, unit: 's' },
      'echostore.l2.duration': { type: DataPointType.HISTOGRAM, unit: 's' },
      'echostore.leases': { type: DataPointType.SUM },
    })
    await table.close()
  })

  it('a failed load is timed under echostore.load.duration with error.type; a good one without it', async () => {
    const table = createTable<string>({ name: 'loads' })
    await table.fetch('good', () => 'ok')
    await expect(table.fetch('bad', () => Promise.reject(new RangeError('origin down')))).rejects.toThrow('origin down')
    const metric = (await otel.sdk.scopes()).flatMap((s) => s.metrics).find((m) => m.descriptor.name === 'echostore.load.duration')!
    const attributes = metric.dataPoints.map((p) => ({ ...p.attributes }))
    expect(attributes).toHaveLength(2)
    expect(attributes).toContainEqual({ 'echostore.table': 'loads' })
    expect(attributes).toContainEqual({ 'echostore.table': 'loads', 'error.type': 'RangeError' })
    await table.close()
  })
})

describe('echostore.leases', () => {
  it('a lease call that fails counts "failed"', async () => {
    const clock = manualClock(0)
    const store = chaosL2(memoryL2({ clock }), clock)
    const table = createTable<string>({ name: 'leases', clock, l2: store, bus: localBus(), lease: true, sweepInterval: 1e9 })
    store.fail('lease', { kind: 'throw' }, { times: 1 })
    expect(await table.fetch('x', () => 'X')).toBe('X')
    await settle()
    expect(await leaseOutcomes()).toEqual({ failed: 1 })
    store.heal()
    await table.close()
  })

  it("a batch's one lease call counts each of its ids: acquired for those taken, busy for those another process holds", async () => {
    const clock = manualClock(0)
    const store = memoryL2({ clock })
    const bus = localBus()
    const options = { name: 'batch-leases', clock, ttl: 60_000, jitter: 0, l2: store, bus, lease: true, sweepInterval: 1e9 } as const
    const holder = createTable<string, Id>(options)
    const other = createTable<string, Id>(options)
    const single = latchedLoader<string>()
    const first = holder.fetch('b', single.loader) // holder takes b's lease
    for (let i = 0; i < 4; i++) await settle()
    expect(single.calls).toHaveLength(1)
    const batch = latchedBatchLoader<string>()
    const many = other.fetchMany(['a', 'b', 'c'], batch.loader) // takes a and c, finds b busy
    for (let i = 0; i < 4; i++) await settle()
    const outcomes = await leaseOutcomes()
    expect(outcomes).toEqual({ acquired: 3, busy: 1 })
    single.only().resolve('B')
    for (const call of batch.calls) call.resolve(call.ids.map((id) => String(id).toUpperCase()))
    for (let i = 0; i < 6; i++) await settle()
    expect(await first).toBe('B')
    expect(await many).toEqual(['A', 'B', 'C'])
    await Promise.all([holder.close(), other.close()])
  })
})
