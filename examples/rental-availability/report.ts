/**
 * The availability service's report: what the cache saves the availability origin, measured at the origin, not
 * only as a hit rate. It runs the campaign (a launch cohort, then Zipf s = 1 hot keys) three times:
 *
 *   coalescing on,  jitter 0.2   the configuration to ship
 *   coalescing off, jitter 0.2   every miss pays an origin call: what the single-flight saves
 *   coalescing on,  jitter 0     the cohort expires together: the re-herd that jitter removes
 *
 * then runs it twice more with the origin down from 1000 to 1800 ms: without grace every read that
 * misses in the outage fails; with grace the last summaries are answered stale while the fail-safe
 * leaves the origin alone. It checks that tenants never share a flight, and shows what the shared L2
 * does across two instances (Redis when REDIS_URL is set or a server answers on 127.0.0.1:6379, else memoryL2).
 * When a depot's stock moves, one `invalidateTags([depot])` makes that depot's summaries stale (in
 * L1 and in L2) and leaves every other depot's rows alone: the report counts the origin calls that follow.
 * It records capacity, TTLs, runtime and the machine's limits. The last line is `RESULT {json}`.
 *
 * Run:  npx tsx examples/rental-availability/report.ts        (RENTAL_SIZE=0.2 for a small run)
 * Look for: origin calls with coalescing off ≫ on; the jitter 0 peak of origin calls per 10 ms ≫
 * the jitter 0.2 one; no failed reads in the outage with grace, and how stale the answers got; one origin call per tenant for a key all tenants read at once; two instances
 * making one call each (coalescing is process-local) and a third answered by L2.
 *
 * The campaign runs on a manual clock, so its numbers repeat exactly; its L2 is a memoryL2 on that
 * same clock, because Redis expires keys on its own clock, which no simulation can drive.
 */
import os from 'node:os'
import { fileURLToPath } from 'node:url'
import v8 from 'node:v8'
import { type Stats, memoryL2 } from 'echostore'
import { manualClock } from 'echostore/testing'
import { barChart } from '../support/readout.js'
import { seeded } from '../support/prng.js'
import { type CampaignResult, runCampaign } from './campaign.js'
import { type Availability, createOrigin } from './origin.js'
import { type ReaderSettings, chooseL2, createReader } from './reader.js'

/** Options of {@link main}. */
export interface RentalReportOptions {
  /** Scales products per depot and reads per ms (1 → 50 products, 30 reads/ms). Default 1. */
  size?: number
  /** Where the report goes. Default `console.log`. */
  log?: (line: string) => void
}

/** One campaign run and the settings it ran with. */
export interface Scenario extends CampaignResult {
  name: string
  settings: ReaderSettings
  /** Origin calls that failed (the outage's), and the longest staleness answered from grace, in ms. */
  originFailures: number
  longestStaleness: number
}

/** What {@link main} returns (and prints as the `RESULT` line). */
export interface RentalReport {
  config: { seed: number; tenants: number; depots: number; products: number; keysPerTenant: number; readsPerMs: number; durationMs: number; originLatencyMs: number; zipfS: number }
  scenarios: { coalesceOn: Scenario; coalesceOff: Scenario; jitter0: Scenario; outage: Scenario; outageGrace: Scenario }
  /** The origin's outage window (ms on the campaign's clock) and the grace of the run that rides it out. */
  outage: { from: number; until: number; grace: number }
  isolation: { readersPerTenant: number; originCalls: number; callsByTenant: Record<string, number>; sameObjectWithinTenant: boolean; ownDataPerTenant: boolean; launchPairsDistinct: boolean }
  /** A depot's stock moved: what one tag invalidation made the table load again. */
  stock: { tenant: string; depot: string; keys: number; originCallsAfter: number; otherDepotCalls: number; changed: number; tagInvalidations: number; tagStale: number }
  instances: { l2: 'redis' | 'memory'; l2Why: string; readersPerInstance: number; originCallsAB: number; originCallsC: number; l2HitsC: number; identicalWithinInstance: boolean }
  machine: { cpus: number; cpuModel: string; parallelism: number; totalMemMB: number; freeMemMB: number; heapLimitMB: number; node: string; platform: string; arch: string }
  runtimeMs: number
}

const SEED = 2026
const TTL = 1_000
const CAPACITY = 10_000
const LATENCY = 20
const DURATION = 2_500
const OUTAGE = { from: 1_000, until: 1_800 }
const GRACE = 5_000

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))
const pct = (n: number) => `${(n * 100).toFixed(1)}%`

function machine(): RentalReport['machine'] {
  const cpus = os.cpus()
  return {
    cpus: cpus.length,
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    parallelism: os.availableParallelism(),
    totalMemMB: Math.round(os.totalmem() / 2 ** 20),
    freeMemMB: Math.round(os.freemem() / 2 ** 20),
    heapLimitMB: Math.round(v8.getHeapStatistics().heap_size_limit / 2 ** 20),
    node: process.version,
    platform: os.platform(),
    arch: os.arch(),
  }
}

/** One campaign on a fresh origin, reader and manual clock. */
async function scenario(
  name: string,
  config: RentalReport['config'],
  { outage, ...settings }: { coalesce: boolean; jitter: number; grace?: number; outage?: { from: number; until: number } },
): Promise<Scenario> {
  const clock = manualClock(0)
  const origin = createOrigin({ clock, seed: config.seed, tenants: config.tenants, depots: config.depots, products: config.products, latency: config.originLatencyMs, ...(outage && { outage }) })
  const l2 = memoryL2({ clock })
  const reader = createReader({ origin, clock, ttl: TTL, capacity: CAPACITY, random: seeded(11), l2, ...settings })
  const result = await runCampaign(reader, origin, clock, { readsPerMs: config.readsPerMs, durationMs: config.durationMs, zipfS: config.zipfS })
  await reader.close()
  await l2.close()
  return { name, settings: reader.settings, ...result, originFailures: origin.failed, longestStaleness: reader.longestStaleness }
}

/** Every tenant reads one key at once, `readers` times: the origin must see one call per tenant. */
async function isolation(config: RentalReport['config'], launch: Scenario, readers: number): Promise<RentalReport['isolation']> {
  const clock = manualClock(0)
  const origin = createOrigin({ clock, seed: config.seed, tenants: config.tenants, depots: config.depots, products: config.products, latency: config.originLatencyMs })
  const reader = createReader({ origin, clock, ttl: TTL, capacity: CAPACITY })
  const key = origin.keys()[0]!
  const answers = origin.tenants.map((tenant) => Array.from({ length: readers }, () => reader.readKey(tenant, key)))
  await new Promise((resolve) => setImmediate(resolve)) // the flights reach the origin
  clock.advance(config.originLatencyMs)
  const values = await Promise.all(answers.map((reads) => Promise.all(reads)))
  await reader.close()
  const callsByTenant = Object.fromEntries(origin.tenants.map((tenant) => [tenant, origin.log.filter((call) => call.tenant === tenant && call.key === key).length]))
  return {
    readersPerTenant: readers,
    originCalls: origin.calls,
    callsByTenant,
    sameObjectWithinTenant: values.every((list) => list.every((value) => value === list[0])),
    ownDataPerTenant: values.every((list, i) => list[0]?.tenant === origin.tenants[i]),
    // In the campaign's launch, every (tenant, key) pair was its own origin call: no pair twice, none missing.
    launchPairsDistinct: launch.launchCalls === launch.launchPairs && launch.launchPairs === config.tenants * config.keysPerTenant,
  }
}

/**
 * A depot's stock moves while every summary of one tenant is cached (L1 and a memoryL2): one
 * `invalidateTags([depot])`, then every key is read again. Only that depot's summaries reach the origin.
 */
async function stockMove(config: RentalReport['config']): Promise<RentalReport['stock']> {
  const clock = manualClock(0)
  const origin = createOrigin({ clock, seed: config.seed, tenants: config.tenants, depots: config.depots, products: config.products, latency: config.originLatencyMs })
  const l2 = memoryL2({ clock })
  const reader = createReader({ origin, clock, ttl: 60_000, jitter: 0, capacity: CAPACITY, l2 })
  const [tenant, depot] = [origin.tenants[0]!, origin.depots[1]!]
  const keys = origin.keys()
  const readAll = async () => {
    const reads = keys.map((key) => reader.readKey(tenant, key))
    await new Promise((resolve) => setImmediate(resolve)) // the flights reach L2, then the origin
    await new Promise((resolve) => setImmediate(resolve))
    clock.advance(config.originLatencyMs)
    return Promise.all(reads)
  }
  const before = await readAll()
  origin.moveStock(tenant, depot)
  await reader.stockMoved(tenant, depot)
  const callsBefore = origin.calls
  const after = await readAll()
  const calls = origin.log.slice(callsBefore)
  const stats = reader.statsByTenant()[tenant]!
  await reader.close()
  await l2.close()
  return {
    tenant,
    depot,
    keys: keys.length,
    originCallsAfter: calls.length,
    otherDepotCalls: calls.filter((call) => !call.key.startsWith(`${depot}/`)).length,
    changed: after.filter((summary, i) => JSON.stringify(summary) !== JSON.stringify(before[i])).length,
    tagInvalidations: stats.tag_invalidations,
    tagStale: stats.tag_stale,
  }
}

/**
 * Three instances of the service sharing one L2, on the real clock. The origin's latency runs on its
 * own manual clock: a latch the report releases, so the outcome does not depend on timing.
 */
async function instances(config: RentalReport['config'], readers: number): Promise<RentalReport['instances']> {
  const latch = manualClock(0)
  const origin = createOrigin({ clock: latch, seed: config.seed, tenants: config.tenants, depots: config.depots, products: config.products, latency: config.originLatencyMs })
  const l2 = await chooseL2()
  const [a, b, c] = [0, 1, 2].map(() => createReader({ origin, ttl: 60_000, capacity: CAPACITY, l2: l2.store }))
  const tenant = origin.tenants[0]!
  const key = origin.keys()[0]!
  /** Waits (real time, bounded) until `done`, releasing the origin latch whenever a call waits on it. */
  const drive = async (done: () => boolean) => {
    for (const deadline = Date.now() + 5_000; !done() && Date.now() < deadline; await sleep(1)) {
      if (origin.pending > 0) latch.advance(config.originLatencyMs)
    }
  }
  try {
    let settled = 0
    const track = (promise: Promise<Availability | undefined>) => promise.finally(() => settled++)
    const onA = Array.from({ length: readers }, () => track(a!.readKey(tenant, key)))
    const onB = Array.from({ length: readers }, () => track(b!.readKey(tenant, key)))
    // Both instances miss L2 and call the origin before either call is released.
    for (const deadline = Date.now() + 5_000; origin.pending < 2 && Date.now() < deadline; ) await sleep(1)
    await drive(() => settled === 2 * readers)
    const [valuesA, valuesB] = await Promise.all([Promise.all(onA), Promise.all(onB)])
    const originCallsAB = origin.calls
    const onC = Array.from({ length: readers }, () => track(c!.readKey(tenant, key)))
    await drive(() => settled === 3 * readers)
    await Promise.all(onC)
    return {
      l2: l2.kind,
      l2Why: l2.why,
      readersPerInstance: readers,
      originCallsAB,
      originCallsC: origin.calls - originCallsAB,
      l2HitsC: c!.stats().l2_hits,
      identicalWithinInstance: [valuesA, valuesB].every((values) => values.every((value) => value === values[0])),
    }
  } finally {
    await Promise.all([a!.close(), b!.close(), c!.close()])
    await l2.close()
  }
}

function row(s: Scenario): string {
  const cells = [
    s.name.padEnd(28),
    String(s.reads).padStart(7),
    String(s.originCalls).padStart(8),
    `${String(s.saved).padStart(7)} (${pct(s.saved / s.reads).padStart(6)})`,
    pct(s.stats.hit_rate).padStart(7),
    String(s.stats.coalesced).padStart(9),
    String(s.peakPer10ms).padStart(6),
    String(s.wallMs).padStart(6),
  ]
  return `  ${cells.join('  ')}`
}

/** Runs the whole report; prints it with `log` and returns it. */
export async function main({ size = 1, log = console.log }: RentalReportOptions = {}): Promise<RentalReport> {
  if (!(size > 0)) throw new RangeError(`size must be a number > 0, got ${size}`)
  const started = performance.now()
  const products = Math.max(10, Math.round(50 * size))
  const config: RentalReport['config'] = {
    seed: SEED,
    tenants: 3,
    depots: 4,
    products,
    keysPerTenant: 4 * products,
    readsPerMs: Math.max(2, Math.round(30 * size)),
    durationMs: DURATION,
    originLatencyMs: LATENCY,
    zipfS: 1,
  }
  const host = machine()
  log('Equipment-rental availability: origin work saved by EchoStore')
  log(`  data      ${config.tenants} tenants × ${config.depots} depots × ${config.products} products = ${config.keysPerTenant} keys per tenant (seed ${config.seed})`)
  log(`  cache     one table per tenant, capacity ${CAPACITY} rows each, ttl ${TTL} ms, negative ttl ${Math.min(TTL, 5_000)} ms, jitter 0.2 or 0`)
  log(`  workload  launch: every tenant reads every key at t=0; then ${config.readsPerMs} reads/ms for ${config.durationMs} ms, key by Zipf s=${config.zipfS}, tenant uniform`)
  log(`  origin    ${config.originLatencyMs} ms per call on the simulated clock; L2 memoryL2 on the same clock`)
  log(`  machine   ${host.cpus} × ${host.cpuModel}; ${host.totalMemMB} MB RAM (${host.freeMemMB} free); heap limit ${host.heapLimitMB} MB; node ${host.node} ${host.platform}/${host.arch}`)

  const coalesceOn = await scenario('coalescing on,  jitter 0.2', config, { coalesce: true, jitter: 0.2 })
  const coalesceOff = await scenario('coalescing off, jitter 0.2', config, { coalesce: false, jitter: 0.2 })
  const jitter0 = await scenario('coalescing on,  jitter 0', config, { coalesce: true, jitter: 0 })
  log('\nThe campaign, three ways (peak: most origin calls in one 10 ms window after the launch instant)')
  log(
    `  ${'scenario'.padEnd(28)}  ${'reads'.padStart(7)}  ${'origin'.padStart(8)}  ${'saved (of reads)'.padStart(17)}  ${'hit'.padStart(7)}  ${'coalesced'.padStart(9)}  ${'peak'.padStart(6)}  ${'wall'.padStart(6)}`,
  )
  for (const s of [coalesceOn, coalesceOff, jitter0]) log(row(s))
  const byCoalescing = coalesceOff.originCalls - coalesceOn.originCalls
  const sameRate = pct(coalesceOff.stats.hit_rate) === pct(coalesceOn.stats.hit_rate)
  log(
    `\n  Coalescing saved ${byCoalescing} origin calls: ${coalesceOff.originCalls} → ${coalesceOn.originCalls} ` +
      `(${(coalesceOff.originCalls / coalesceOn.originCalls).toFixed(1)}× less origin work), ` +
      (sameRate
        ? `with the same hit rate (${pct(coalesceOn.stats.hit_rate)}) both ways: the hit ratio cannot see this saving.`
        : `while the hit rate moved ${pct(coalesceOff.stats.hit_rate)} → ${pct(coalesceOn.stats.hit_rate)}.`),
  )
  log(
    `  Jitter 0.2 cut the re-fill peak from ${jitter0.peakPer10ms} (at ${jitter0.peakAt} ms) to ${coalesceOn.peakPer10ms} (at ${coalesceOn.peakAt} ms) ` +
      `origin calls per 10 ms. Origin calls per 10 ms from 700 to 1300 ms, on one scale:`,
  )
  const scale = Math.max(jitter0.peakPer10ms, coalesceOn.peakPer10ms)
  for (const s of [jitter0, coalesceOn]) {
    log(`  jitter ${s.settings.jitter} (peak ${s.peakPer10ms})`)
    for (const line of barChart([...s.callsPer10ms.slice(70, 130), scale], 4)) log(`   │${line.slice(0, -1)}`)
    log(`   └${'─'.repeat(60)}`)
  }

  const outage = await scenario('origin down, no grace', config, { coalesce: true, jitter: 0.2, outage: OUTAGE })
  const outageGrace = await scenario(`origin down, grace ${GRACE / 1_000} s`, config, { coalesce: true, jitter: 0.2, grace: GRACE, outage: OUTAGE })
  log(`\nThe origin fails every call from ${OUTAGE.from} to ${OUTAGE.until} ms (same campaign, coalescing on, jitter 0.2)`)
  log(
    `  ${'scenario'.padEnd(28)}  ${'reads'.padStart(7)}  ${'origin'.padStart(8)}  ${'failed'.padStart(7)}  ${'read errors'.padStart(11)}  ${'stale'.padStart(7)}  ${'fail-safe'.padStart(9)}  ${'stalest'.padStart(8)}`,
  )
  for (const s of [outage, outageGrace]) {
    const cells = [
      s.name.padEnd(28),
      String(s.reads).padStart(7),
      String(s.originCalls).padStart(8),
      String(s.originFailures).padStart(7),
      String(s.errors).padStart(11),
      String(s.stats.stale_hits).padStart(7),
      String(s.stats.failsafe).padStart(9),
      `${s.longestStaleness} ms`.padStart(8),
    ]
    log(`  ${cells.join('  ')}`)
  }
  log(
    `  Without grace, ${outage.errors} reads failed with the origin. With ${GRACE / 1_000} s of grace, ${outageGrace.errors} did: ` +
      `${outageGrace.stats.stale_hits} were answered with a summary at most ${outageGrace.longestStaleness} ms past its expiry, ` +
      `and the origin took ${outageGrace.originFailures} failing calls instead of ${outage.originFailures} (the fail-safe backs off after each).`,
  )

  const isolated = await isolation(config, jitter0, 50)
  log(`\nTenants never share a flight: ${config.tenants} tenants × ${isolated.readersPerTenant} concurrent reads of one key → ${isolated.originCalls} origin calls`)
  log(`  per tenant ${JSON.stringify(isolated.callsByTenant)}; each tenant's readers got one object (${isolated.sameObjectWithinTenant}), carrying its own data (${isolated.ownDataPerTenant})`)
  log(
    `  the campaign's launch: ${jitter0.launchCalls} origin calls, ${jitter0.launchPairs} distinct (tenant, key) pairs, for ` +
      `${config.tenants} × ${config.keysPerTenant} pairs read (${isolated.launchPairsDistinct ? 'one call each' : 'MISMATCH'})`,
  )

  const stock = await stockMove(config)
  log(`\nStock moved at ${stock.depot} (${stock.tenant}): one invalidateTags(['${stock.depot}']), then all ${stock.keys} keys read again`)
  log(
    `  ${stock.originCallsAfter} origin calls (the depot's ${config.products} summaries; ${stock.otherDepotCalls} for the other depots), ${stock.changed} summaries changed; tag_stale ${stock.tagStale} (the rows and their L2 entries, each found older than the tag)`,
  )

  const across = await instances(config, 100)
  log(`\nAcross instances, with ${across.l2Why}`)
  log(`  instances A and B: ${across.readersPerInstance} concurrent reads each of one key → ${across.originCallsAB} origin calls (one per instance: coalescing is process-local)`)
  log(`  instance C starts cold: ${across.readersPerInstance} reads → ${across.originCallsC} origin calls, ${across.l2HitsC} L2 hit (the shared L2 answered)`)

  const runtimeMs = Math.round(performance.now() - started)
  log(`\nRuntime ${runtimeMs} ms (wall clock) for ${5 * config.durationMs} simulated ms of campaign.`)
  const report: RentalReport = {
    config,
    scenarios: { coalesceOn, coalesceOff, jitter0, outage, outageGrace },
    outage: { ...OUTAGE, grace: GRACE },
    isolation: isolated,
    stock,
    instances: across,
    machine: host,
    runtimeMs,
  }
  const brief = (s: Scenario) => {
    const { callsPer10ms, ...rest } = s
    return { ...rest, stats: pick(s.stats) }
  }
  const scenarios = Object.fromEntries(Object.entries(report.scenarios).map(([key, s]) => [key, brief(s)]))
  log(`RESULT ${JSON.stringify({ ...report, scenarios })}`)
  return report
}

/** The counters a reader of the report needs. */
function pick(stats: Stats) {
  const { hits, misses, coalesced, flights, loads, fills, l2_hits, load_errors, stale_hits, failsafe, full_skips, swept, size, hit_rate } = stats
  return { hits, misses, coalesced, flights, loads, fills, l2_hits, load_errors, stale_hits, failsafe, full_skips, swept, size, hit_rate }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  await main({ size: Number(process.env.RENTAL_SIZE ?? 1) })
}
