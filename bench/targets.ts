import type { WorkloadId } from './lib/config.js'
import { num, percent, sig } from './lib/format.js'
import type { WorkloadResult } from './workloads/context.js'
import { SLICED_FLOOR } from './workloads/w7-sweeper.js'
import { HIT_RATE_PEERS, traceMetric, type W9Result } from './workloads/w9-hit-rate.js'
import { batchTargets } from './workloads/w11-targets.js'

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
  }
  {
    const l200 = get(results, 'W2', SUBJECT, 'loads200')
    const l10k = get(results, 'W2', SUBJECT, 'loads10000')
    const measured = l200 !== undefined && l10k !== undefined ? `${num(l200, 1)} at N=200, ${num(l10k, 1)} at N=10,000` : undefined
    out.push(row('W2', 'loader calls exactly 1 per herd', measured, undefined, measured === undefined ? undefined : l200 === 1 && l10k === 1))
    const es = get(results, 'W2', SUBJECT, 'us10000')
    const acd = get(results, 'W2', 'async-cache-dedupe', 'us10000')
    const [r, ok] = compare(es, acd, (x) => x <= 1)
    out.push(row('W2', "µs per waiter ≤ async-cache-dedupe's at N = 10,000", es !== undefined && acd !== undefined ? `${sig(es)} µs vs ${sig(acd)} µs` : undefined, r, ok))
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
  }
  {
    const name = `${SUBJECT} (jitter 0.2)`
    const peak = get(results, 'W6', name, 'peak')
    const uniform = get(results, 'W6', name, 'uniform')
    const [r, ok] = compare(peak, uniform, (x) => x <= 3)
    out.push(row('W6', 'no 10 ms window with > 3× the uniform share of refills', peak !== undefined && uniform !== undefined ? `peak ${num(peak)} vs uniform ${num(uniform)} per 10 ms` : undefined, r, ok))
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
  {
    const max = get(results, 'W8', SUBJECT, 'leaseLoadsMax')
    const together = get(results, 'W8', SUBJECT, 'togetherLoadsMedian')
    const measured = max === undefined ? undefined : `at most ${num(max)} per herd with lease (${together === undefined ? 'n/a' : num(together, 1)} without)`
    out.push(row('W8', 'with lease, a herd in 4 processes at once costs exactly 1 loader call', measured, undefined, max === undefined ? undefined : max === 1))
  }
  {
    const max = get(results, 'W8', SUBJECT, 'clusterLeaseLoadsMax')
    out.push(row('W8', 'on a Redis Cluster, a lease herd in 4 processes costs exactly 1 loader call', max === undefined ? undefined : `at most ${num(max)} per herd`, undefined, max === undefined ? undefined : max === 1))
    const spread = get(results, 'W8', SUBJECT, 'clusterMasterOverMean')
    out.push(row('W8', "on a Redis Cluster, no master serves more than 1.5× the mean of one table's commands", spread === undefined ? undefined : `${sig(spread)}× the mean`, undefined, spread === undefined ? undefined : spread <= 1.5))
  }
  out.push(...hitRateTargets(results))
  out.push(...batchTargets(results.W11))
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
