import { execFile } from 'node:child_process'
import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import * as promClient from 'prom-client'
import { describe, expect, it } from 'vitest'
import { type Id, COUNTER_NAMES, type Stats, createTable } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { registerTableMetrics } from '../src/prometheus.js'
import { latchedLoader, settle } from './support/latch.js'

/** The samples of a text scrape: `name{labels}` → value. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>()
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const cut = line.lastIndexOf(' ')
    out.set(line.slice(0, cut), Number(line.slice(cut + 1)))
  }
  return out
}

/** `echostore_<name>_total{table="…"}` for counters, `echostore_<name>{table="…"}` for gauges. */
function expectScrapeMatches(scrape: Map<string, number>, table: string, stats: Stats): void {
  for (const name of COUNTER_NAMES) expect(scrape.get(`echostore_${name}_total{table="${table}"}`), name).toBe(stats[name])
  for (const name of ['size', 'inflight', 'hit_rate'] as const) expect(scrape.get(`echostore_${name}{table="${table}"}`), name).toBe(stats[name])
}

describe('Prometheus export (registerTableMetrics)', () => {
  it('scrapes every counter with the values of a known workload, and the gauges', async () => {
    const registry = new promClient.Registry()
    const clock = manualClock()
    const sets = createTable<string | undefined, Id>({ name: 'emoji_sets', clock, loadTimeout: 1_000 })
    const unregister = registerTableMetrics(promClient, sets, { registry })

    // 5 cold readers on one id: one flight, 4 coalesced; then 3 hits.
    const origin = latchedLoader<string>()
    const herd = Array.from({ length: 5 }, () => sets.fetch('party', origin.loader))
    await settle()
    origin.only().resolve('🎉')
    await Promise.all(herd)
    for (let i = 0; i < 3; i++) await sets.fetch('party', origin.loader)
    // A miss that finds nothing: a negative row, then 2 negative hits.
    await sets.fetch('nope', () => undefined)
    await sets.fetch('nope', () => undefined)
    await sets.fetch('nope', () => undefined)
    // A loader that fails.
    await expect(sets.fetch('boom', () => Promise.reject(new Error('origin down')))).rejects.toThrow('origin down')
    // A flight still in progress at scrape time.
    const slow = latchedLoader<string>()
    const pending = sets.fetch('slow', slow.loader)
    await settle()

    const scrape = samples(await registry.metrics())
    const stats = sets.stats()
    expect(stats).toMatchObject({ hits: 5, misses: 8, coalesced: 4, flights: 4, loads: 4, fills: 2, negative_hits: 2, load_errors: 1, size: 2, inflight: 1 })
    expectScrapeMatches(scrape, 'emoji_sets', stats)
    expect(scrape.get('echostore_hits_total{table="emoji_sets"}')).toBe(5)
    expect(scrape.get('echostore_coalesced_total{table="emoji_sets"}')).toBe(4)
    expect(scrape.get('echostore_inflight{table="emoji_sets"}')).toBe(1)
    expect(scrape.get('echostore_hit_rate{table="emoji_sets"}')).toBeCloseTo(5 / 13, 12)

    // The next scrape reads the numbers of now, not of the first scrape.
    slow.only().resolve('🐢')
    await pending
    const later = samples(await registry.metrics())
    expect(later.get('echostore_inflight{table="emoji_sets"}')).toBe(0)
    expect(later.get('echostore_fills_total{table="emoji_sets"}')).toBe(3)

    const text = await registry.metrics()
    expect(text).toContain('# TYPE echostore_loads_total counter')
    expect(text).toContain('# TYPE echostore_size gauge')
    expect(text).toContain('# TYPE echostore_hit_rate gauge')
    await sets.close()
    unregister()
  })

  it('reads one stats() snapshot per table per scrape', async () => {
    const registry = new promClient.Registry()
    const table = createTable<number | undefined, Id>({ name: 'counted', clock: manualClock() })
    let reads = 0
    const source = { name: table.name, stats: () => (reads++, table.stats()) }
    const unregister = registerTableMetrics(promClient, source, { registry })
    await registry.metrics()
    expect(reads).toBe(1)
    await registry.metrics()
    await registry.getMetricsAsJSON()
    expect(reads).toBe(3)
    unregister()
    await table.close()
  })

  it('two tables → two label values of the same metric families', async () => {
    const registry = new promClient.Registry()
    const clock = manualClock()
    const a = createTable<number | undefined, Id>({ name: 'a', clock })
    const b = createTable<number | undefined, Id>({ name: 'b', clock })
    const offA = registerTableMetrics(promClient, a, { registry })
    const offB = registerTableMetrics(promClient, b, { registry })
    await a.fetch(1, () => 1)
    await a.fetch(1, () => 1)
    for (let id = 0; id < 3; id++) await b.fetch(id, () => id)

    const scrape = samples(await registry.metrics())
    expectScrapeMatches(scrape, 'a', a.stats())
    expectScrapeMatches(scrape, 'b', b.stats())
    expect(scrape.get('echostore_loads_total{table="a"}')).toBe(1)
    expect(scrape.get('echostore_loads_total{table="b"}')).toBe(3)
    const json = await registry.getMetricsAsJSON()
    const hits = json.find((metric) => metric.name === 'echostore_hits_total')
    expect(hits?.values.map((value) => value.labels.table).sort()).toEqual(['a', 'b'])

    // Unregistering one table drops its series only.
    offA()
    offA() // idempotent
    const afterA = samples(await registry.metrics())
    expect([...afterA.keys()].some((key) => key.includes('table="a"'))).toBe(false)
    expect(afterA.get('echostore_loads_total{table="b"}')).toBe(3)

    // The last one out removes the families; registering again brings them back.
    offB()
    expect(await registry.metrics()).not.toContain('echostore_')
    expect(registry.getMetricsAsArray()).toHaveLength(0)
    const again = registerTableMetrics(promClient, b, { registry })
    expect(samples(await registry.metrics()).get('echostore_loads_total{table="b"}')).toBe(3)
    again()
    await Promise.all([a.close(), b.close()])
  })

  it('a prefix names the families; a label renames the series; duplicates are refused', async () => {
    const registry = new promClient.Registry()
    const clock = manualClock()
    const a = createTable<number | undefined, Id>({ name: 'same', clock })
    const b = createTable<number | undefined, Id>({ name: 'same', clock })
    const offA = registerTableMetrics(promClient, a, { registry, prefix: 'shop_cache_' })
    expect(() => registerTableMetrics(promClient, b, { registry, prefix: 'shop_cache_' })).toThrow(TypeError)
    const offB = registerTableMetrics(promClient, b, { registry, prefix: 'shop_cache_', label: 'same#2' })
    const text = await registry.metrics()
    expect(text).toContain('shop_cache_hits_total{table="same"} 0')
    expect(text).toContain('shop_cache_hits_total{table="same#2"} 0')
    expect(() => registerTableMetrics(promClient, a, { registry, prefix: 'bad prefix' })).toThrow(TypeError)
    expect(() => registerTableMetrics({} as never, a, { registry })).toThrow(TypeError)
    offA()
    offB()
    await Promise.all([a.close(), b.close()])
  })

  it('a name already taken in the registry throws and leaves the registry as it was', () => {
    const registry = new promClient.Registry()
    new promClient.Gauge({ name: 'echostore_loads_total', help: 'someone else', registers: [registry] })
    const table = createTable<number | undefined, Id>({ name: 't', clock: manualClock() })
    expect(() => registerTableMetrics(promClient, table, { registry })).toThrow(/already been registered/)
    expect(registry.getMetricsAsArray().map((metric) => metric.name)).toEqual(['echostore_loads_total'])
    return table.close()
  })

  it("defaults to prom-client's global registry, and never registers there when given its own", async () => {
    const table = createTable<number | undefined, Id>({ name: 'global_default', clock: manualClock() })
    const mine = new promClient.Registry()
    const offMine = registerTableMetrics(promClient, table, { registry: mine })
    expect(await promClient.register.metrics()).not.toContain('table="global_default"')
    offMine()
    const offGlobal = registerTableMetrics(promClient, table)
    expect(await promClient.register.metrics()).toContain('echostore_hits_total{table="global_default"} 0')
    offGlobal()
    expect(await promClient.register.metrics()).not.toContain('echostore_')
    await table.close()
  })

  it('prom-client stays optional: nothing under src/ imports it at run time', () => {
    const files = (function walk(dir: string): string[] {
      return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? walk(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : []))
    })(join(import.meta.dirname, '..', 'src'))
    expect(files.length).toBeGreaterThan(5)
    for (const file of files) {
      // Doc comments may show how a user imports it; code may not.
      const source = readFileSync(file, 'utf8')
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .replace(/\/\/.*$/gm, '')
      expect(source, file).not.toMatch(/^\s*(?:import|export)\b[^;'"]*?\bfrom\s*['"]prom-client['"]|\b(?:import|require)\s*\(\s*['"]prom-client['"]/m)
    }
  })

  it('prom-client stays optional: the package loads and works when prom-client cannot be resolved', async () => {
    // A resolve hook makes `prom-client` unresolvable, as if it were not installed.
    const hooks = `export async function resolve(specifier, context, next) {
      if (specifier === 'prom-client' || specifier.startsWith('prom-client/')) throw new Error('prom-client is not installed')
      return next(specifier, context)
    }`
    const entry = (name: string) => pathToFileURL(join(import.meta.dirname, '..', 'src', name)).href
    const script = `
      import { register } from 'node:module'
      register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hooks)}))
      const echostore = await import(${JSON.stringify(entry('index.ts'))})
      const prometheus = await import(${JSON.stringify(entry('prometheus.ts'))})
      const table = echostore.createTable({ name: 'x' })
      const value = await table.fetch(1, () => 'loaded')
      const absent = await import('prom-client').then(() => 'present', () => 'absent')
      console.log(JSON.stringify({ value, absent, exported: typeof prometheus.registerTableMetrics }))
      await table.close()`
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: join(import.meta.dirname, '..') })
    expect(JSON.parse(stdout.trim())).toEqual({ value: 'loaded', absent: 'absent', exported: 'function' })
  })
})
