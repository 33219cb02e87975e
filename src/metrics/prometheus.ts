/**
 * The counters as Prometheus metrics, through the caller's own `prom-client` (an optional peer
 * dependency). This module never imports `prom-client`: you pass the module in, so a package
 * without it installed loses nothing, and your metrics land in your copy of the library.
 *
 * ```ts
 * import * as promClient from 'prom-client'
 * import { registerTableMetrics } from 'echostore/prometheus'
 *
 * const unregister = registerTableMetrics(promClient, sets, { registry: promClient.register })
 * // GET /metrics → echostore_hits_total{table="emoji_sets"} 1234 ...
 * await sets.close(); unregister()
 * ```
 *
 * Every counter of `stats()` becomes a Counter `<prefix><counter>_total`; `size`, `weight`,
 * `inflight` and `hit_rate` become Gauges `<prefix><name>`. Each registered table adds one `table="<name>"` series
 * to every metric. The values are read at scrape time, from one `stats()` snapshot per table per
 * scrape, so the numbers of one scrape are consistent with each other (a snapshot is frozen).
 */
import { COUNTER_NAMES, type CounterName, type Stats } from '../core/counters.js'
import { badArgument, describe } from '../core/errors.js'
import { readOptions } from '../table/read-options.js'

/**
 * A label set: `{ table: 'emoji_sets' }`.
 * @inline
 */
type Labels = Record<string, string>

/** The part of a prom-client `Registry` this module uses. */
export interface PromRegistry {
  /** Adds a metric to the registry. */
  registerMetric(metric: object): void
  /** Removes the metric of that name from the registry. */
  removeSingleMetric(name: string): void
}

/** The part of a prom-client Counter/Gauge configuration this module passes. */
export interface PromMetricConfig {
  /** The metric's name: the prefix, then the counter's name (and `_total` for a counter). */
  name: string
  /** The counter's description, as in the README's table of counters. */
  help: string
  /** Always `['table']`. */
  labelNames: string[]
  /** Always empty: the metric is registered explicitly, never in prom-client's global registry by default. */
  registers: never[]
  /** Called by the registry at every scrape, before it reads the values. */
  collect(): void
}

/** The part of the `prom-client` module this module uses: `import * as promClient from 'prom-client'`. */
export interface PromClient {
  /** prom-client's `Counter` class: one per counter, set at every scrape by `reset()` then `inc(labels, value)`. */
  Counter: new (
    config: PromMetricConfig,
  ) => {
    /** Forgets every series of the metric. */
    reset(): void
    /** Adds `value` to the series of `labels`. */
    inc(labels: Labels, value: number): void
  }
  /** prom-client's `Gauge` class: one per gauge (`size`, `weight`, `inflight`, `hit_rate`). */
  Gauge: new (
    config: PromMetricConfig,
  ) => {
    /** Forgets every series of the metric. */
    reset(): void
    /** Sets the series of `labels` to `value`. */
    set(labels: Labels, value: number): void
  }
  /** The default registry, used when no `registry` is given. */
  register: PromRegistry
}

/** Anything with a name and a stats snapshot: a `Table`. */
export interface MetricsSource {
  /** The table's name: the default `table` label. */
  readonly name: string
  /** A snapshot of the counters, read once per scrape. */
  stats(): Stats
}

/** Options of {@link registerTableMetrics}. */
export interface TableMetricsOptions {
  /** The prom-client registry to register in. Default: `promClient.register` (the global one). */
  registry?: PromRegistry
  /** Prepended to every metric name. Default `'echostore_'`. */
  prefix?: string
  /** The `table` label value. Default: the table's name. Two tables in one registry need different labels. */
  label?: string
}

/** Help text of every counter; `Record<CounterName, …>` makes the compiler ask for a new counter's help. */
const HELP: Record<CounterName, string> = {
  hits: 'Fetches answered from a live row (negative rows included).',
  misses: 'Fetches that found no live row.',
  negative_hits: 'Hits on negative (not found) rows.',
  coalesced: 'Misses that joined a flight already in progress.',
  flights: 'Flights (single-flight loads) started.',
  fills: 'Rows written by completed flights.',
  l2_hits: 'Flights answered by L2 without calling the loader.',
  loads: 'Ids loaded from the origin (loader calls, and ids asked in batch loader calls): the origin work actually done.',
  load_errors: 'Flights that ended in an error (loader failure or loadTimeout).',
  abandoned: 'Flights released because every waiter left by cancellation.',
  stale_hits: 'Answers served from a graced value (past its expiry, within the grace).',
  failsafe: 'Flights whose failure was absorbed by a graced value.',
  full_skips: 'Fills and puts not stored because the table was full and admission refused them.',
  evictions: 'Rows removed to make room: for a new id, or (with maxSize) for a heavier value.',
  heavy_skips: 'Values not stored because sizeOf weighed them above maxSize.',
  sizeof_errors: 'Values not stored because sizeOf threw or answered anything but an integer >= 0.',
  swept: 'Rows reclaimed by the sweeper.',
  sweeps: 'Sweeper passes.',
  fenced: 'Flight answers not stored, or dropped, because a newer version was known (a change mid-flight, or L2 holds newer).',
  timeouts: 'Waiters that left by their own deadline.',
  cancelled: 'Waiters that left by their signal.',
  l2_errors: 'L2 calls that failed.',
  l2_timeouts: 'L2 calls that timed out.',
  l2_skipped: 'L2 calls skipped while the L2 breaker was open.',
  l2_corrupt: 'L2 entries that could not be decoded (read as misses).',
  l2_oversize: 'L2 entries larger than the store accepts, neither written nor decoded.',
  l2_codec_errors: 'Values the L2 codec could not encode (not written).',
  coh_applied: 'Coherence messages applied.',
  coh_stale: 'Coherence messages dropped as not newer than what was held.',
  coh_invalid: 'Coherence messages that could not be parsed.',
  coh_foreign: 'Coherence messages of another key space (L2 prefix or bus namespace) ignored.',
  coh_gaps: 'Gaps reported by the coherence bus (every L1 row dropped).',
  coh_dropped: 'L1 rows dropped because of bus gaps.',
  bus_errors: 'Coherence broadcasts that failed.',
  lease_acquired: "Flights that took their id's lease at once and loaded it for every process.",
  lease_waited: "Flights answered by another process's fill while it held the lease.",
  lease_lost: "Flights that waited for another process's lease, got no fill in time, and loaded themselves.",
  batch_loads: 'Batch loader calls: one origin call for many ids.',
  batch_ids: 'Ids asked in batch loader calls (also in loads).',
  tag_invalidations: "Tag invalidations applied (this instance's own, and other instances' heard on the bus; a namespace clear counts one).",
  tag_stale: 'Reads that found a row or an L2 entry older than one of its tags (not answered).',
  clears: "Clears of the whole table applied (its own, and other instances' heard on the bus).",
}

const GAUGES = {
  size: 'Rows held now (expired rows count until swept or replaced).',
  weight: 'Weight the rows hold now, in the units of sizeOf (0 without maxSize).',
  inflight: 'Flights in progress now.',
  hit_rate: 'hits / (hits + misses); 0 before any read.',
} as const

/** One set of metric families in one registry under one prefix, shared by every table registered there. */
interface Exporter {
  readonly sources: Map<string, MetricsSource>
  readonly names: string[]
  readonly registry: PromRegistry
}

/** Exporters by registry, then by prefix: prom-client allows one metric per name in a registry. */
const exporters = new WeakMap<PromRegistry, Map<string, Exporter>>()

function createExporter(promClient: PromClient, registry: PromRegistry, prefix: string): Exporter {
  const sources = new Map<string, MetricsSource>()
  // One snapshot per table per scrape: a registry calls every metric's collect() in one synchronous
  // pass, so the snapshots taken by the first collect() are dropped at the next microtask.
  let scrape: [string, Stats][] | undefined
  const snapshots = (): [string, Stats][] => {
    if (scrape === undefined) {
      scrape = [...sources].map(([label, source]) => [label, source.stats()])
      queueMicrotask(() => (scrape = undefined))
    }
    return scrape
  }
  const names: string[] = []
  const config = (name: string, help: string, collect: () => void): PromMetricConfig => {
    names.push(name)
    return { name, help, labelNames: ['table'], registers: [], collect }
  }
  try {
    for (const key of COUNTER_NAMES) {
      const counter: InstanceType<PromClient['Counter']> = new promClient.Counter(
        config(`${prefix}${key}_total`, HELP[key], () => {
          counter.reset()
          for (const [table, stats] of snapshots()) counter.inc({ table }, stats[key])
        }),
      )
      registry.registerMetric(counter)
    }
    for (const key of Object.keys(GAUGES) as (keyof typeof GAUGES)[]) {
      const gauge: InstanceType<PromClient['Gauge']> = new promClient.Gauge(
        config(`${prefix}${key}`, GAUGES[key], () => {
          gauge.reset()
          for (const [table, stats] of snapshots()) gauge.set({ table }, stats[key])
        }),
      )
      registry.registerMetric(gauge)
    }
  } catch (error) {
    // A name already taken in the registry: leave the registry as it was.
    for (const name of names.slice(0, -1)) registry.removeSingleMetric(name)
    throw error
  }
  return { sources, names, registry }
}

/**
 * Exports `table`'s counters to a prom-client registry, with the label `table="<name>"`.
 * Pass the prom-client module itself (`import * as promClient from 'prom-client'`): EchoStore does
 * not depend on it. Tables registered in one registry under one prefix share the metric families,
 * each adding its own series; a second table with the same label throws a `TypeError`.
 *
 * Returns `unregister()`: it removes the table's series (the families too, once no table is left).
 * Idempotent. Call it when the table closes (`await table.close(); unregister()`); until then a
 * closed table keeps exporting its last numbers. After `registry.clear()`, call every `unregister()`
 * and register the tables again.
 */
export function registerTableMetrics(promClient: PromClient, table: MetricsSource, options?: TableMetricsOptions): () => void {
  if (typeof promClient?.Counter !== 'function' || typeof promClient?.Gauge !== 'function') {
    throw badArgument(TypeError, `registerTableMetrics: pass the prom-client module (import * as promClient from 'prom-client') as the first argument, got ${describe(promClient)}`)
  }
  if (typeof table?.stats !== 'function') throw badArgument(TypeError, `registerTableMetrics: the second argument must be a table (with stats()), got ${describe(table)}`)
  // Unknown and null options are refused, as every other call's are (a typo would silently take the default).
  const read = (options === undefined ? {} : readOptions(options, ['registry', 'prefix', 'label'], 'registerTableMetrics(promClient, table, options)')) as TableMetricsOptions
  const { registry = promClient.register, prefix = 'echostore_', label = table.name } = read
  if (typeof registry?.registerMetric !== 'function' || typeof registry.removeSingleMetric !== 'function')
    throw badArgument(
      TypeError,
      `registerTableMetrics: option "registry" must be a prom-client Registry (new promClient.Registry(), or leave it out for promClient.register), got ${describe(registry)}`,
    )
  if (typeof prefix !== 'string' || !/^[a-zA-Z_:][a-zA-Z0-9_:]*$|^$/.test(prefix)) {
    throw badArgument(
      TypeError,
      `registerTableMetrics: option "prefix" must be a Prometheus metric name prefix (letters, digits, _ and :, not starting with a digit; '' for none), got ${describe(prefix)}`,
    )
  }
  if (typeof label !== 'string' || label === '')
    throw badArgument(TypeError, `registerTableMetrics: option "label" must be a non-empty string (it defaults to the table's name), got ${describe(label)}`)

  let byPrefix = exporters.get(registry)
  if (byPrefix === undefined) exporters.set(registry, (byPrefix = new Map()))
  let exporter = byPrefix.get(prefix)
  if (exporter?.sources.has(label)) {
    throw badArgument(TypeError, `registerTableMetrics: a table labelled "${label}" is already registered here (pass a distinct "label")`)
  }
  if (exporter === undefined) {
    exporter = createExporter(promClient, registry, prefix)
    byPrefix.set(prefix, exporter)
  }
  exporter.sources.set(label, table)

  const mine = exporter
  let registered = true
  return function unregister(): void {
    if (!registered) return
    registered = false
    mine.sources.delete(label)
    if (mine.sources.size > 0) return
    for (const name of mine.names) mine.registry.removeSingleMetric(name)
    if (byPrefix.get(prefix) === mine) byPrefix.delete(prefix)
  }
}
