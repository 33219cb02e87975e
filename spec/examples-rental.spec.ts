import { describe, expect, it } from 'vitest'
import { manualClock } from '../src/testing.js'
import { createOrigin } from '../examples/rental-availability/origin.js'
import { createReader } from '../examples/rental-availability/reader.js'
import { main } from '../examples/rental-availability/report.js'

describe('examples/rental-availability', () => {
  it('the origin is deterministic: same seed, same tenants, depots, products and numbers', async () => {
    const summaries = async () => {
      const clock = manualClock()
      const origin = createOrigin({ clock, seed: 99, tenants: 2, depots: 3, products: 5 })
      const reads = origin.tenants.flatMap((tenant) => origin.keys().map((key) => origin.availability(tenant, key)))
      clock.advance(20)
      return { tenants: origin.tenants, keys: origin.keys(), values: await Promise.all(reads), calls: origin.calls }
    }
    const [one, two] = [await summaries(), await summaries()]
    expect(one).toEqual(two)
    expect(one.calls).toBe(2 * 3 * 5)
    for (const value of one.values) expect(value!.available).toBe(value!.fleet - value!.rented)
  })

  it('the reader keeps tenants apart and answers unknown keys with a cached absence', async () => {
    const clock = manualClock()
    const origin = createOrigin({ clock, tenants: 2 })
    const reader = createReader({ origin, clock })
    const [t1, t2] = origin.tenants as [string, string]
    const reads = [reader.read(t1, origin.depots[0]!, 'sku-0001'), reader.read(t2, origin.depots[0]!, 'sku-0001'), reader.read(t1, 'depot-nowhere', 'sku-0001')]
    await new Promise((resolve) => setImmediate(resolve))
    clock.advance(20)
    const [a, b, none] = await Promise.all(reads)
    expect(a!.tenant).toBe(t1)
    expect(b!.tenant).toBe(t2)
    expect(none).toBeUndefined()
    expect(await reader.read(t1, 'depot-nowhere', 'sku-0001')).toBeUndefined()
    expect(origin.calls).toBe(3)
    expect(reader.stats()).toMatchObject({ misses: 3, hits: 1, negative_hits: 1, loads: 3 })
    await expect(reader.read('no-such-tenant', 'd', 's')).rejects.toThrow(RangeError)
    await reader.close()
  })

  it('report.ts: origin work saved with coalescing and jitter; tenants never share a flight', async () => {
    const report = await main({ size: 0.2, log: () => {} })
    const { coalesceOn, coalesceOff, jitter0 } = report.scenarios

    // Coalescing off costs more origin calls than on, with the same workload.
    expect(coalesceOff.reads).toBe(coalesceOn.reads)
    expect(coalesceOff.originCalls).toBeGreaterThan(coalesceOn.originCalls)
    // Jitter 0.2 has a lower peak of origin calls per 10 ms than jitter 0 (the synchronized re-fill).
    expect(coalesceOn.peakPer10ms).toBeLessThan(jitter0.peakPer10ms)
    expect(jitter0.peakAt).toBeGreaterThanOrEqual(report.config.originLatencyMs + 1_000)

    // The numbers reported agree with the cache's own counters and the origin's own count.
    for (const s of [coalesceOn, coalesceOff, jitter0]) {
      expect(s.errors).toBe(0)
      expect(s.stats.hits + s.stats.misses).toBe(s.reads)
      expect(s.stats.loads).toBe(s.originCalls) // no L2 hits: L2 expires with L1 on the one clock
      expect(s.saved).toBe(s.reads - s.originCalls)
      expect(s.stats.inflight).toBe(0)
      expect(s.callsPer10ms.reduce((n, calls) => n + calls, 0)).toBe(s.originCalls - s.launchCalls)
    }
    expect(coalesceOn.stats.misses).toBe(coalesceOn.stats.flights + coalesceOn.stats.coalesced)
    expect(coalesceOff.stats.coalesced).toBe(0)
    expect(coalesceOff.stats.misses).toBe(coalesceOff.originCalls)

    // An origin outage: without grace, reads that miss in it fail; with grace, none do, and the
    // fail-safe's back-off spares the failing origin most of the calls.
    const { outage, outageGrace } = report.scenarios
    expect(outage.originFailures).toBeGreaterThan(0)
    expect(outage.errors).toBeGreaterThan(0)
    expect(outage.stats.stale_hits).toBe(0)
    expect(outageGrace.errors).toBe(0)
    expect(outageGrace.stats.stale_hits).toBeGreaterThan(0)
    expect(outageGrace.stats.failsafe).toBe(outageGrace.originFailures)
    expect(outageGrace.originFailures).toBeLessThan(outage.originFailures)
    expect(outageGrace.longestStaleness).toBeGreaterThan(0)
    expect(outageGrace.longestStaleness).toBeLessThanOrEqual(report.outage.grace)
    expect(outageGrace.settings.grace).toBe(report.outage.grace)
    for (const s of [outage, outageGrace]) expect(s.stats.hits + s.stats.misses).toBe(s.reads)

    // Tenants never share a flight: the origin saw each (tenant, key) load separately.
    const { isolation, config } = report
    expect(isolation.originCalls).toBe(config.tenants)
    expect(Object.values(isolation.callsByTenant)).toEqual(Array(config.tenants).fill(1))
    expect(isolation.sameObjectWithinTenant).toBe(true)
    expect(isolation.ownDataPerTenant).toBe(true)
    expect(isolation.launchPairsDistinct).toBe(true)
    for (const s of [coalesceOn, coalesceOff, jitter0]) {
      expect(s.launchCalls).toBe(config.tenants * config.keysPerTenant)
      expect(s.launchPairs).toBe(s.launchCalls)
    }

    // A depot's stock moved: one tag invalidation reloads that depot's summaries only, each once, from
    // the origin (its L2 entries are as stale as its rows), and they carry the new stock.
    const { stock } = report
    expect(stock.originCallsAfter).toBe(config.products)
    expect(stock.otherDepotCalls).toBe(0)
    expect(stock.changed).toBeGreaterThan(0)
    expect(stock.changed).toBeLessThanOrEqual(config.products)
    expect(stock.tagInvalidations).toBe(1)
    expect(stock.tagStale).toBe(2 * config.products)

    // Across instances: one origin call per instance; the third is answered by the one flight it starts.
    expect(report.instances.originCallsAB).toBe(2)
    expect(report.instances.identicalWithinInstance).toBe(true)
    expect(report.instances.originCallsC + report.instances.l2HitsC).toBe(1)

    // The settings each run records.
    expect(coalesceOn.settings).toMatchObject({ ttl: 1_000, jitter: 0.2, capacity: 10_000, coalesce: true })
    expect(jitter0.settings.jitter).toBe(0)
    expect(report.machine.cpus).toBeGreaterThan(0)
    expect(report.machine.node).toBe(process.version)
    expect(report.runtimeMs).toBeGreaterThan(0)
  })
})
