import type { WorkloadId } from './lib/config.js'
import { num, percent, sig } from './lib/format.js'
import type { WorkloadResult } from './workloads/context.js'
import { TAG_BYTES_BOUND } from './workloads/w5-memory.js'
import { SLICED_FLOOR } from './workloads/w7-sweeper.js'
import { ROOT_IMPORT_BUDGET_MS } from './workloads/w10-import.js'
import { HIT_RATE_PEERS, traceMetric, type W9Result } from './workloads/w9-hit-rate.js'
import { batchTargets } from './workloads/w11-targets.js'
import { dayMetric, INSTANCES } from './workloads/w12-day.js'

/** One line of the targets table. */
export interface TargetRow {
  workload: string
  target: string
  measured: string
  ratio: string
  verdict: 'pass' | 'FAIL' | 'not measured' | 'info'
}

/** Results by workload, as the run collected them. */
export type Results = Partial<Record<WorkloadId, WorkloadResult>>

const SUBJECT = 'echostore'
const PEERS = ['lru-cache', 'bentocache', 'cache-manager', 'async-cache-dedupe']

function get(results: Results, w: WorkloadId, name: string, key: string): number | undefined {
  const value = results[w]?.metrics.get(name)?.[key]
  return value !== undefined && Number.isFinite(value) ? value : undefined
}

function row(workload: string, target: string, measured: string | undefined, r: number | undefined, ok: boolean | undefined): TargetRow {
  if (measured === undefined || ok === undefined) return { workload, target, measured: 'n/a', ratio: 'n/a', verdict: 'not measured' }
  return { workload, target, measured, ratio: r === undefined ? '—' : `${sig(r)}×`, verdict: ok ? 'pass' : 'FAIL' }
}

/** A ratio `a / b` and whether it meets `ok`, or undefineds when either side was not measured. */
function compare(a: number | undefined, b: number | undefined, ok: (r: number) => boolean): [number | undefined, boolean | undefined] {
  if (a === undefined || b === undefined || b === 0) return [undefined, undefined]
  return [a / b, ok(a / b)]
}

/** Each of the project's benchmark targets, with the measured figures, the ratio from the same run, and pass/fail. */
export function evaluateTargets(results: Results): TargetRow[] {
  const out: TargetRow[] = []
  const peersIn = (w: WorkloadId, key: string) => PEERS.map((p) => [p, get(results, w, p, key)] as const).filter((e): e is readonly [string, number] => e[1] !== undefined)

  {
    const es = get(results, 'W1', SUBJECT, 'nsPerOp')
    const floor = get(results, 'W1', 'floor:map', 'nsPerOp')
    const lru = get(results, 'W1', 'lru-cache', 'nsPerOp')
    const [r1, ok1] = compare(es, floor, (r) => r <= 1)
    out.push(row('W1', 'hit ≤ 1.0× the raw-Map floor', es !== undefined && floor !== undefined ? `${sig(es)} ns vs ${sig(floor)} ns` : undefined, r1, ok1))
    const [r2, ok2] = compare(es, lru, (r) => r <= 1)
    out.push(row('W1', "hit ≤ lru-cache's", es !== undefined && lru !== undefined ? `${sig(es)} ns vs ${sig(lru)} ns` : undefined, r2, ok2))
    const tagged = get(results, 'W1', SUBJECT, 'nsPerOpTagged')
    const [r3, ok3] = compare(tagged, es, (r) => r <= 1.3)
    out.push(row('W1', 'hit on a tagged row ≤ 1.3× an untagged hit', tagged !== undefined && es !== undefined ? `${sig(tagged)} ns vs ${sig(es)} ns` : undefined, r3, ok3))
  }
  {
    const l200 = get(results, 'W2', SUBJECT, 'loads200')
    const l10k = get(results, 'W2', SUBJECT, 'loads10000')
    const measured = l200 !== undefined && l10k !== undefined ? `${num(l200, 1)} at N=200, ${num(l10k, 1)} at N=10,000` : undefined
    out.push(row('W2', 'loader calls exactly 1 per herd', measured, undefined, measured === undefined ? undefined : l200 === 1 && l10k === 1))
    const es = get(results, 'W2', SUBJECT, 'us10000')
    const acd = get(results, 'W2', 'async-cache-dedupe', 'us10000')
    const esCall = get(results, 'W2', SUBJECT, 'callNs10000')
    const acdCall = get(results, 'W2', 'async-cache-dedupe', 'callNs10000')
    const calls = esCall !== undefined && acdCall !== undefined ? ` (the calls alone: ${sig(esCall)} ns vs ${sig(acdCall)} ns)` : ''
    const [r, ok] = compare(es, acd, (x) => x <= 1)
    out.push(row('W2', "µs per waiter ≤ async-cache-dedupe's at N = 10,000", es !== undefined && acd !== undefined ? `${sig(es)} µs vs ${sig(acd)} µs${calls}` : undefined, r, ok))
  }
  {
    const es = get(results, 'W3', SUBJECT, 'opsPerSec')
    const acd = get(results, 'W3', 'async-cache-dedupe', 'opsPerSec')
    const [r, ok] = compare(es, acd, (x) => x >= 1.5)
    out.push(row('W3', "cold misses ≥ 1.5× async-cache-dedupe's ops/s", es !== undefined && acd !== undefined ? `${num(es)} vs ${num(acd)} ops/s` : undefined, r, ok))
  }
  {
    const es = get(results, 'W4', SUBJECT, 'opsPerSec')
    const peers = peersIn('W4', 'opsPerSec')
    const fastest = peers.length > 0 ? peers.reduce((a, b) => (b[1] > a[1] ? b : a)) : undefined
    const [r, ok] = compare(es, fastest?.[1], (x) => x >= 1.5)
    out.push(row('W4', "Zipf ≥ 1.5× the fastest peer's ops/s", es !== undefined && fastest !== undefined ? `${num(es)} vs ${num(fastest[1])} ops/s (${fastest[0]})` : undefined, r, ok))
    const esLoads = get(results, 'W4', SUBJECT, 'loads')
    const loads = peersIn('W4', 'loads')
    const best = loads.length > 0 ? loads.reduce((a, b) => (b[1] < a[1] ? b : a)) : undefined
    const [r2, ok2] = compare(esLoads, best?.[1], (x) => x <= 1)
    out.push(row('W4', "loader calls ≤ the best peer's", esLoads !== undefined && best !== undefined ? `${num(esLoads)} vs ${num(best[1])} (${best[0]})` : undefined, r2, ok2))
  }
  {
    const es = get(results, 'W5', SUBJECT, 'bytesPerRow')
    const lru = get(results, 'W5', 'lru-cache', 'bytesPerRow')
    const [r, ok] = compare(es, lru, (x) => x <= 1)
    out.push(row('W5', "bytes per row ≤ lru-cache's", es !== undefined && lru !== undefined ? `${num(es, 1)} B vs ${num(lru, 1)} B` : undefined, r, ok))
    const perTag = get(results, 'W5', SUBJECT, 'bytesPerTag')
    const [rt, okt] = compare(perTag, TAG_BYTES_BOUND, (x) => x <= 1)
    out.push(row('W5', `bytes kept per distinct tag invalidated, once its rows expired and were swept ≤ ${TAG_BYTES_BOUND} B`, perTag === undefined ? undefined : `${num(perTag, 2)} B`, rt, okt))
  }
  {
    const name = `${SUBJECT} (jitter 0.2)`
    const peak = get(results, 'W6', name, 'peak')
    const uniform = get(results, 'W6', name, 'uniform')
    const [r, ok] = compare(peak, uniform, (x) => x <= 3)
    out.push(
      row('W6', 'no 10 ms window with > 3× the uniform share of refills', peak !== undefined && uniform !== undefined ? `peak ${num(peak)} vs uniform ${num(uniform)} per 10 ms` : undefined, r, ok),
    )
    const peers = PEERS.filter((p) => get(results, 'W6', p, 'peak') !== undefined)
    const whole = peers.map((p) => [p, get(results, 'W6', p, 'peak')!, get(results, 'W6', p, 'refilled')!] as const)
    out.push({
      workload: 'W6',
      target: 'peers (no jitter) show the whole cohort in one window (peak / ids refilled)',
      measured: whole.length > 0 ? whole.map(([p, pk, n]) => `${p} ${num(pk)}/${num(n)}`).join(', ') : 'n/a',
      ratio: '—',
      verdict: whole.length > 0 ? 'info' : 'not measured',
    })
  }
  {
    const stall = get(results, 'W7', SUBJECT, 'stallMaxMs')
    const floorStall = get(results, 'W7', SLICED_FLOOR, 'stallMaxMs')
    const [r1, ok1] = compare(stall, floorStall, (x) => x <= 0.25)
    out.push(row('W7', `longest stall while reclaiming ≤ 0.25× ${SLICED_FLOOR}'s`, stall !== undefined && floorStall !== undefined ? `${sig(stall)} ms vs ${sig(floorStall)} ms` : undefined, r1, ok1))
    const rate = get(results, 'W7', SUBJECT, 'rowsPerSec')
    const floorRate = get(results, 'W7', SLICED_FLOOR, 'rowsPerSec')
    const [r2, ok2] = compare(rate, floorRate, (x) => x >= 0.8)
    out.push(row('W7', `rows reclaimed per second ≥ 0.8× ${SLICED_FLOOR}'s`, rate !== undefined && floorRate !== undefined ? `${num(rate)} vs ${num(floorRate)} rows/s` : undefined, r2, ok2))
  }
  for (const [client, prefix] of [
    ['', ''],
    [' on node-redis', 'nodeRedis'],
  ] as const) {
    const key = (name: string) => (prefix === '' ? name : `${prefix}${name[0]!.toUpperCase()}${name.slice(1)}`)
    const max = get(results, 'W8', SUBJECT, key('leaseLoadsMax'))
    const together = get(results, 'W8', SUBJECT, key('togetherLoadsMedian'))
    const measured = max === undefined ? undefined : `at most ${num(max)} per herd with lease (${together === undefined ? 'n/a' : num(together, 1)} without)`
    out.push(row('W8', `with lease${client}, a herd in 4 processes at once costs exactly 1 loader call`, measured, undefined, max === undefined ? undefined : max === 1))
  }
  for (const [client, key] of [
    ['', 'burstLease'],
    [' on node-redis', 'nodeRedisBurstLease'],
  ] as const) {
    const loads = get(results, 'W8', SUBJECT, `${key}LoadsMax`)
    const ids = get(results, 'W8', SUBJECT, `${key}Ids`)
    out.push(
      row(
        'W8',
        `a cold start of 4 processes × 1,600 simultaneous fills with lease${client}: one load per id across the processes, in every round`,
        loads === undefined || ids === undefined ? undefined : `at most ${num(loads)} loads for ${num(ids)} ids (worst round)`,
        undefined,
        loads === undefined || ids === undefined ? undefined : loads === ids,
      ),
    )
    const timeouts = get(results, 'W8', SUBJECT, `${key}Timeouts`)
    const skipped = get(results, 'W8', SUBJECT, `${key}Skipped`)
    const measured = timeouts === undefined || skipped === undefined ? undefined : `${num(timeouts)} timeouts, ${num(skipped)} calls skipped by an open breaker (worst round)`
    if (client === '')
      out.push(
        row(
          'W8',
          'a cold start of 4 processes × 1,600 simultaneous fills with lease: no L2 timeout, no breaker opening',
          measured,
          undefined,
          measured === undefined ? undefined : timeouts === 0 && skipped === 0,
        ),
      )
    // node-redis hands Redis a process's whole burst at once, so one process may take every lease and
    // its write-backs then queue behind the other processes' reads: measured and explained (README Limits), not a target.
    else
      out.push({
        workload: 'W8',
        target: `the same cold start with lease${client}: L2 timeouts and breaker openings (see README Limits)`,
        measured: measured ?? 'n/a',
        ratio: '—',
        verdict: measured === undefined ? 'not measured' : 'info',
      })
  }

  {
    const max = get(results, 'W8', SUBJECT, 'clusterLeaseLoadsMax')
    out.push(
      row(
        'W8',
        'on a Redis Cluster, a lease herd in 4 processes costs exactly 1 loader call',
        max === undefined ? undefined : `at most ${num(max)} per herd`,
        undefined,
        max === undefined ? undefined : max === 1,
      ),
    )
    const spread = get(results, 'W8', SUBJECT, 'clusterMasterOverMean')
    out.push(
      row(
        'W8',
        "on a Redis Cluster, no master serves more than 1.5× the mean of one table's commands",
        spread === undefined ? undefined : `${sig(spread)}× the mean`,
        undefined,
        spread === undefined ? undefined : spread <= 1.5,
      ),
    )
  }
  out.push(...hitRateTargets(results))
  {
    const es = get(results, 'W10', SUBJECT, 'importMs')
    const lru = get(results, 'W10', 'lru-cache', 'importMs')
    const [r, ok] = compare(es, ROOT_IMPORT_BUDGET_MS, (x) => x <= 1)
    out.push(row('W10', `\`import 'echostore'\` ≤ ${ROOT_IMPORT_BUDGET_MS} ms`, es === undefined ? undefined : `${sig(es)} ms (lru-cache ${lru === undefined ? 'n/a' : `${sig(lru)} ms`})`, r, ok))
  }
  out.push(...batchTargets(results.W11))
  out.push(...dayTargets(results))
  return out
}

/** W9, per trace: EchoStore's hit rate against the best of LRU, W-TinyLFU and SIEVE (the better one holds fewer loads). */
function hitRateTargets(results: Results): TargetRow[] {
  const target = `hit rate ≥ the best of ${Object.values(HIT_RATE_PEERS).join(', ')}`
  const traces = (results.W9 as W9Result | undefined)?.traces
  if (traces === undefined) return [row('W9', `${target}, per trace`, undefined, undefined, undefined)]
  return traces.map(({ name }) => {
    const figure = (contender: string, key: 'hitRate' | 'loads') => get(results, 'W9', contender, traceMetric(name, key))
    const es = figure(SUBJECT, 'hitRate')
    const peers = Object.keys(HIT_RATE_PEERS).filter((p) => figure(p, 'loads') !== undefined)
    const best = peers.length > 0 ? peers.reduce((a, b) => (figure(b, 'loads')! < figure(a, 'loads')! ? b : a)) : undefined
    if (es === undefined || best === undefined) return row('W9', `${name}: ${target}`, undefined, undefined, undefined)
    const bestRate = figure(best, 'hitRate')!
    const points = (es - bestRate) * 100
    const measured = `${percent(es)} vs ${percent(bestRate)} (${best}), ${points >= 0 ? '+' : '−'}${num(Math.abs(points), 1)} points`
    return row('W9', `${name}: ${target}`, measured, es / bestRate, figure(SUBJECT, 'loads')! <= figure(best, 'loads')!)
  })
}

/** W12's peers: every published library in the day (the floor is not a peer). */
const DAY_PEERS = ['bentocache', 'lru-cache', 'async-cache-dedupe', 'cache-manager', 'cachified']
/** EchoStore's four-instance row without `lease`. */
const NO_LEASE = `${SUBJECT}, no lease`

/** W12, per shape: origin calls, failed reads, stale reads and p99 against the best peer; four instances against one; lease against no lease. */
function dayTargets(results: Results): TargetRow[] {
  const out: TargetRow[] = []
  const figure = (name: string, key: Parameters<typeof dayMetric>[0], instances: number) => get(results, 'W12', name, dayMetric(key, instances))
  const best = (key: Parameters<typeof dayMetric>[0], instances: number) => {
    const peers = DAY_PEERS.map((p) => [p, figure(p, key, instances)] as const).filter((e): e is readonly [string, number] => e[1] !== undefined)
    return peers.length > 0 ? peers.reduce((a, b) => (b[1] < a[1] ? b : a)) : undefined
  }
  const versusBest = (shape: string, instances: number, key: Parameters<typeof dayMetric>[0], what: string, bound: number, unit: string, digits: (x: number) => string) => {
    const es = figure(SUBJECT, key, instances)
    const peer = best(key, instances)
    const target = bound === 1 ? `${shape}: ${what} ≤ the best peer's` : `${shape}: ${what} ≤ ${bound.toFixed(2)}× the best peer's`
    const measured = es !== undefined && peer !== undefined ? `${digits(es)}${unit} vs ${digits(peer[1])}${unit} (${peer[0]})` : undefined
    if (es !== undefined && peer !== undefined && peer[1] === 0) return row('W12', target, measured, undefined, es === 0)
    const [r, ok] = compare(es, peer?.[1], (x) => x <= bound)
    return row('W12', target, measured, r, ok)
  }
  const zeroStale = (shape: string, instances: number) => {
    const stale = figure(SUBJECT, 'stale', instances)
    return row(
      'W12',
      `${shape}: no read returns a value older than an update that finished before it started`,
      stale === undefined ? undefined : `${num(stale)} such reads`,
      undefined,
      stale === undefined ? undefined : stale === 0,
    )
  }
  // Not a target: a peer that answers with a value older than a finished update fails fewer reads; this row counts both kinds of wrong answer.
  const wrongAnswers = (shape: string, instances: number): TargetRow => {
    const r = versusBest(shape, instances, 'wrong', 'failed reads + reads older than a finished update', 1, '', (x) => num(x))
    return { ...r, verdict: r.verdict === 'not measured' ? r.verdict : 'info' }
  }
  const one = 'one instance'
  const four = `${INSTANCES} instances`
  out.push(versusBest(one, 1, 'calls', 'origin calls (the fewest)', 1, '', (x) => num(x)))
  out.push(versusBest(one, 1, 'failed', 'failed reads', 1, '', (x) => num(x)))
  out.push(zeroStale(one, 1))
  out.push(wrongAnswers(one, 1))
  out.push(versusBest(one, 1, 'p99', 'p99 latency', 1, ' ms', sig))
  out.push(versusBest(four, INSTANCES, 'calls', 'origin calls', 0.9, '', (x) => num(x)))
  {
    const es4 = figure(SUBJECT, 'calls', INSTANCES)
    const es1 = figure(SUBJECT, 'calls', 1)
    const [r, ok] = compare(es4, es1, (x) => x <= 1.03)
    out.push(
      row(
        'W12',
        `${four}: origin calls ≤ 1.03× EchoStore's own one-instance count (scaling out costs no origin work)`,
        es4 !== undefined && es1 !== undefined ? `${num(es4)} vs ${num(es1)}` : undefined,
        r,
        ok,
      ),
    )
  }
  out.push(versusBest(four, INSTANCES, 'failed', 'failed reads', 1, '', (x) => num(x)))
  out.push(zeroStale(four, INSTANCES))
  out.push(wrongAnswers(four, INSTANCES))
  out.push(versusBest(four, INSTANCES, 'p99', 'p99 latency', 1, ' ms', sig))
  const lease = (key: Parameters<typeof dayMetric>[0], target: string, bound: number, strict: boolean, unit: string, digits: (x: number) => string) => {
    const a = figure(SUBJECT, key, INSTANCES)
    const b = figure(NO_LEASE, key, INSTANCES)
    const [r, ok] = compare(a, b, (x) => (strict ? x < bound : x <= bound))
    return row('W12', target, a !== undefined && b !== undefined ? `${digits(a)}${unit} with lease vs ${digits(b)}${unit} without` : undefined, r, ok)
  }
  out.push(lease('calls', `${four}, lease: fewer origin calls than without`, 1, true, '', (x) => num(x)))
  out.push(lease('redis', `${four}, lease: Redis commands ≤ 1.3× the run without`, 1.3, false, '', (x) => num(x)))
  out.push(lease('p99', `${four}, lease: p99 ≤ 1.1× the run without`, 1.1, false, ' ms', sig))
  out.push(...weightTargets(results))
  return out
}

/** W13, per trace: the weight held never passes maxSize, and the hit rate is at least lru-cache's with the same maxSize. */
function weightTargets(results: Results): TargetRow[] {
  const out: TargetRow[] = []
  for (const trace of ['zipf', 'shifting']) {
    const heaviest = get(results, 'W13', SUBJECT, `heaviest:${trace}`)
    const maxSize = get(results, 'W13', SUBJECT, 'maxSize')
    const [r1, ok1] = compare(heaviest, maxSize, (r) => r <= 1)
    out.push(row('W13', `${trace}: weight held ≤ maxSize`, heaviest !== undefined && maxSize !== undefined ? `${num(heaviest)} vs ${num(maxSize)}` : undefined, r1, ok1))
    const es = get(results, 'W13', SUBJECT, `hitRate:${trace}`)
    const lru = get(results, 'W13', 'lru-cache', `hitRate:${trace}`)
    const [r2, ok2] = compare(es, lru, (r) => r >= 1)
    out.push(row('W13', `${trace}: hit rate ≥ lru-cache's with the same maxSize`, es !== undefined && lru !== undefined ? `${percent(es)} vs ${percent(lru)}` : undefined, r2, ok2))
  }
  return out
}
