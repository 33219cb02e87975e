/**
 * Two promises of the Prometheus export: `stats().weight` is the Gauge `echostore_weight`, scraped
 * with the table's value; and a table does not unregister itself: after `close()` its series stay
 * until `unregister()`.
 */
import * as promClient from 'prom-client'
import { describe, expect, it } from 'vitest'
import { createTable } from '../src/index.js'
import { registerTableMetrics } from '../src/prometheus.js'
import { manualClock } from '../src/testing.js'

describe('registerTableMetrics', () => {
  it('exports stats().weight as the gauge echostore_weight', async () => {
    const registry = new promClient.Registry()
    const table = createTable<string>({ name: 'weighed', clock: manualClock(0), maxSize: 1_000, sizeOf: (value) => value.length })
    const unregister = registerTableMetrics(promClient, table, { registry })
    await table.fetch('a', () => 'x'.repeat(30))
    await table.fetch('b', () => 'x'.repeat(12))
    expect(table.stats().weight).toBe(42)
    const text = await registry.metrics()
    expect(text).toContain('# TYPE echostore_weight gauge')
    expect(text).toContain('echostore_weight{table="weighed"} 42')
    unregister()
    await table.close()
  })

  it('keeps a closed table’s series until unregister()', async () => {
    const registry = new promClient.Registry()
    const table = createTable<string>({ name: 'closed', clock: manualClock(0) })
    const unregister = registerTableMetrics(promClient, table, { registry })
    await table.fetch('a', () => 'A')
    await table.close()
    expect(await registry.metrics()).toContain('echostore_loads_total{table="closed"} 1')
    unregister()
    expect(await registry.metrics()).not.toContain('table="closed"')
  })
})
