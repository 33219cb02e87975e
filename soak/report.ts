/**
 * What the soak prints: a progress line every few seconds (to stderr, by the caller), and the final
 * report (to stdout): what ran, what was injected and tried, how the process held up, every
 * table's counters, and the checks with the verdict.
 */
import { COUNTER_NAMES, type Stats } from '../src/index.js'
import { num, renderTable } from '../bench/lib/format.js'
import { CATALOG, type BadInputs } from './bad-inputs.js'
import type { Check, HeapSamples } from './checks.js'
import type { FaultCounts } from './faults.js'
import type { LoopDelay } from './vitals.js'
import type { WorkloadCounts } from './workload.js'
import type { TableLabel } from './world.js'

/** Bytes as MiB with one decimal. */
export function mib(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(1)} MiB`
}

const ms = (value: number) => `${value.toFixed(1)} ms`
const counts = (record: Record<string, number>) =>
  Object.entries(record)
    .map(([k, v]) => `${k} ${num(v)}`)
    .join(' · ')

/** What a progress line shows. */
export interface Progress {
  /** Seconds since the workload started. */
  elapsed: number
  workload: WorkloadCounts
  faults: FaultCounts
  badInputs: BadInputs
  /** Promises the ledger holds open now. */
  pending: number
  heap: number
  loop: LoopDelay
}

/** One progress line: operations and their rate, faults, bad inputs, open promises, heap (not collected) and loop delay. */
export function progressLine(p: Progress): string {
  const total = p.workload.total
  return [
    `[soak ${p.elapsed.toFixed(1).padStart(6)}s] ${num(total)} ops (${num(total / Math.max(p.elapsed, 1e-3))}/s)`,
    `faults ${num(p.faults.total)}`,
    `bad inputs ${num(p.badInputs.count)}`,
    `pending ${num(p.pending)}`,
    `heap ${mib(p.heap)}`,
    `loop p99 ${ms(p.loop.p99)}`,
  ].join(' · ')
}

/** What the final report shows. */
export interface ReportData {
  seconds: number
  seed: number
  /** The Redis behind the third table and its key prefix, or why there is none. */
  redis: { url: string; prefix: string } | { skipped: string }
  elapsed: number
  workload: WorkloadCounts
  faults: FaultCounts
  badInputs: BadInputs
  heap: Partial<HeapSamples>
  /** Event-loop delay of the first and the second half (the midpoint's forced GC is in neither). */
  loop: LoopDelay[]
  tables: { label: TableLabel; stats: Stats }[]
  /** The scheduled model part: how many schedules and operations ran. */
  model: { schedules: number; operations: number }
  checks: Check[]
}

const STORES: Record<TableLabel, string> = { plain: 'no L2', memory: 'chaosL2(memoryL2())', redis: 'chaosL2(redisL2())' }

/** The final report, as lines of text; the last line is the verdict. */
export function renderReport(r: ReportData): string {
  const w = r.workload
  const heap = (value: number | undefined) => (value === undefined ? 'n/a' : mib(value))
  const failed = r.checks.filter((c) => c.status === 'FAIL').length
  const skipped = r.checks.filter((c) => c.status === 'SKIP').length
  const lines = [
    `EchoStore soak: ${r.seconds} s, seed ${r.seed}`,
    `tables: ${r.tables.map((t) => `${t.label} (${STORES[t.label]})`).join(', ')}`,
    'url' in r.redis ? `redis: ${r.redis.url}, key prefix ${r.redis.prefix}` : `redis: skipped (${r.redis.skipped})`,
    '',
    `operations: ${num(w.total)} in ${r.elapsed.toFixed(1)} s (${num(w.total / r.elapsed)}/s)`,
    `  by kind: ${counts(w.ops)}`,
    `  fetch calls ${num(w.fetchCalls)} (herd callers ${num(w.herdCallers)}); loaders handed out: ${counts(w.loaders)}`,
    `  cancel points: ${counts(w.cancelPoints)}`,
    `faults injected: ${num(r.faults.total)}; ${num(r.faults.heals)} heals released ${num(r.faults.released)} stalled calls`,
    ...Object.entries(r.faults.injected).map(([name, n]) => `  ${name}: ${num(n)}`),
    `bad inputs tried: ${num(r.badInputs.count)} (${(r.badInputs.count / CATALOG.length).toFixed(1)} rounds of the ${CATALOG.length}-entry catalog)`,
    `  ${counts(r.badInputs.tried)}`,
    `scheduled model: ${num(r.model.schedules)} schedules, ${num(r.model.operations)} operations`,
    `heap after a forced GC: start ${heap(r.heap.start)} · middle ${heap(r.heap.middle)} · end ${heap(r.heap.end)}`,
    `event-loop delay, ${r.loop.length === 2 ? 'first half / second half' : 'whole run'}: p99 ${r.loop.map((l) => ms(l.p99)).join(' / ')} · max ${r.loop.map((l) => ms(l.max)).join(' / ')}`,
    '',
    renderTable({
      caption: 'counters at the quiescent end:',
      headers: ['counter', ...r.tables.map((t) => t.label)],
      rows: [...COUNTER_NAMES, 'size', 'inflight'].map((name) => [name, ...r.tables.map((t) => num(t.stats[name as keyof Stats]))]),
    }),
    '',
    'checks:',
    ...r.checks.map((c) => `${c.status.padEnd(4)}  ${c.name}: ${c.detail}`),
    '',
    failed > 0 ? `FAIL: ${failed} of ${r.checks.length} checks failed` : `PASS: ${r.checks.length - skipped} checks passed${skipped > 0 ? `, ${skipped} skipped` : ''}`,
  ]
  return lines.join('\n')
}
