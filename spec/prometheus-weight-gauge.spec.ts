/**
 * The Prometheus export carries the `weight` gauge beside `size`, `inflight` and `hit_rate`: the
 * weight the rows of a table bounded by `maxSize` hold, as `stats().weight` says, read at each scrape.
 */
import * as promClient from 'prom-client'
import { describe, expect, it } from 'vitest'
import { type Id, createTable } from '../src/index.js'
import { registerTableMetrics } from '../src/prometheus.js'
import { manualClock } from '../src/testing.js'

describe('Prometheus export of weight', () => {
  it('echostore_weight{table} is a gauge of stats().weight, read at each scrape', async () => {
    const registry = new promClient.Registry()
    const table = createTable<string, Id>({ name: 'sized', maxSize: 1_000, sizeOf: (value: string) => value.length, clock: manualClock(0) })
    const unregister = registerTableMetrics(promClient, table, { registry })
    await table.fetch('a', () => 'x'.repeat(120))
    await table.fetch('b', () => 'x'.repeat(30))
    const first = await registry.metrics()
    expect(first).toContain('# TYPE echostore_weight gauge')
    expect(first).toMatch(/^echostore_weight\{table="sized"\} 150$/m)
    await table.invalidate('a')
    expect(await registry.metrics()).toMatch(/^echostore_weight\{table="sized"\} 30$/m)
    unregister()
    await table.close()
  })
})
