/**
 * The checks a run ends with, each PASS, FAIL or SKIP with a one-line detail: the counter laws of
 * the README for every table (at a quiescent point, every call settled and no flight running),
 * the rules the workload and the bad-input catalog kept, and what must be left when it is over:
 * no lost promise, no unhandled rejection, no timer, no Redis key, no heap growth.
 */
import type { Stats } from '../src/index.js'
import { num } from '../bench/lib/format.js'
import { mib } from './report.js'
import { CATALOG, CATEGORIES, type BadInputs, ruleOf } from './bad-inputs.js'
import type { Escapes } from './escapes.js'
import { FAULTS, type FaultCounts } from './faults.js'
import { LOADER_KINDS } from './loaders.js'
import type { Problems } from './problems.js'
import { INTERNAL_FAULT, type Tally } from './tally.js'
import { CANCEL_POINTS, OP_MIX, RULES, WORKERS, type WorkloadCounts } from './workload.js'
import type { Leftovers, TableLabel } from './world.js'

/** One line of the verdict. */
export interface Check {
  name: string
  status: 'PASS' | 'FAIL' | 'SKIP'
  detail: string
}

/** Heap used after a forced GC at the start, the middle and the end of the workload, in bytes. */
export interface HeapSamples {
  start: number
  middle: number
  end: number
}

/**
 * How much the heap may grow from the middle of the run to its end: 4 MiB. The live set is bounded
 * by construction (rows by `capacity`, the memory L2 by expiry, calls in flight by the workers), so
 * it is reached within seconds; the middle sample is taken under load and the end one at rest, so
 * the end sits at or below the middle unless something accumulates. In the second half of a default
 * run about 900,000 operations and 150,000 never-seen ids (ghosts) arrive: keeping 5 bytes per
 * operation, or 30 bytes per new id, would pass the bound, while in runs here the end came out
 * 1.8 to 3.6 MiB below the middle.
 */
export const HEAP_GROWTH_BOUND = 4 * 2 ** 20

/** The check that every call the soak made settled. */
export const CALLS_SETTLED = 'nothing lost: every fetch, put, invalidate and bad input settled'
/** The check that every loader the tables called settled: a loader that waits for its signal settles only if the table aborts it. */
export const LOADERS_SETTLED = 'nothing lost: every loader settled (a released flight aborts its loader’s signal)'
/** The check that the workers and the fault schedule ended: one waiting on a lost call never does. */
export const WORKERS_BACK = 'every worker came back from its last operation'

/** Everything the checks look at, gathered by the run. */
export interface Figures {
  tables: { label: TableLabel; stats: Stats; tally: Tally; capacity: number; hasL2: boolean }[]
  problems: Problems
  workload: WorkloadCounts
  faults: FaultCounts
  badInputs: BadInputs
  /** Promises the soak made, and those still pending after the drain, by kind (`loader (<table>)`, or a call). */
  promises: { made: Record<string, number>; pending: Record<string, number> }
  /** Every worker, and the fault schedule, came back from its last operation after the deadline. */
  workersBack: boolean
  escapes: Escapes
  /** Stalled chaos calls after the final heal. */
  stalled: number
  leftovers: Leftovers
  heap: HeapSamples | undefined
}

const check = (name: string, pass: boolean, detail: string): Check => ({ name, status: pass ? 'PASS' : 'FAIL', detail })
const list = (entries: [string, number][]) => entries.map(([k, v]) => `${k} ${num(v)}`).join(', ')

/** The checks of a run, in report order. */
export function runChecks(f: Figures): Check[] {
  const checks: Check[] = []

  /** One counter law over every table: `holds` per table, and the figures shown for it. */
  const law = (name: string, holds: (s: Stats, t: Tally, capacity: number) => boolean, shown: (s: Stats, t: Tally, capacity: number) => string) => {
    const rows = f.tables.map(({ label, stats, tally, capacity }) => ({ label, ok: holds(stats, tally, capacity), shown: shown(stats, tally, capacity) }))
    checks.push(
      check(
        name,
        rows.every((r) => r.ok),
        rows.map((r) => `${r.label} ${r.shown}${r.ok ? '' : ' ✗'}`).join(' · '),
      ),
    )
  }
  law(
    'hits + misses = fetches that reached the lookup',
    (s, t) => s.hits + s.misses === t.lookups,
    (s, t) => `${num(s.hits + s.misses)} = ${num(t.lookups)}`,
  )
  law(
    'misses = flights + coalesced (coalescing stayed on)',
    (s) => s.misses === s.flights + s.coalesced,
    (s) => `${num(s.misses)} = ${num(s.flights + s.coalesced)}`,
  )
  law(
    'loads ≤ flights',
    (s) => s.loads <= s.flights,
    (s) => `${num(s.loads)} ≤ ${num(s.flights)}`,
  )
  law(
    'loads = loader calls the origin saw',
    (s, t) => s.loads === t.loaderCalls,
    (s, t) => `${num(s.loads)} = ${num(t.loaderCalls)}`,
  )
  law(
    'l2_hits + loads ≤ flights (a flight answers from one place)',
    (s) => s.l2_hits + s.loads <= s.flights,
    (s) => `${num(s.l2_hits + s.loads)} ≤ ${num(s.flights)}`,
  )
  law(
    'flights = answered (fill events) + load_errors + abandoned: each flight ended once',
    (s, t) => s.flights === t.completed + s.load_errors + s.abandoned,
    (s, t) => `${num(s.flights)} = ${num(t.completed + s.load_errors + s.abandoned)}`,
  )
  law(
    'l2_hits = flights answered by L2',
    (s, t) => s.l2_hits === t.completedFromL2,
    (s, t) => `${num(s.l2_hits)} = ${num(t.completedFromL2)}`,
  )
  law(
    'fills ≤ answered flights',
    (s, t) => s.fills <= t.completed,
    (s, t) => `${num(s.fills)} ≤ ${num(t.completed)}`,
  )
  law(
    'timeouts = callers rejected with FetchTimeoutError',
    (s, t) => s.timeouts === t.timedOut,
    (s, t) => `${num(s.timeouts)} = ${num(t.timedOut)}`,
  )
  law(
    'cancelled = callers rejected with their own signal’s reason',
    (s, t) => s.cancelled === t.cancelled,
    (s, t) => `${num(s.cancelled)} = ${num(t.cancelled)}`,
  )
  law(
    'abandoned ≤ cancelled, negative_hits ≤ hits',
    (s) => s.abandoned <= s.cancelled && s.negative_hits <= s.hits,
    (s) => `${num(s.abandoned)} ≤ ${num(s.cancelled)}, ${num(s.negative_hits)} ≤ ${num(s.hits)}`,
  )
  law(
    'inflight = 0 once every call has settled',
    (s) => s.inflight === 0,
    (s) => `${s.inflight}`,
  )
  law(
    'grace: failsafe ≤ load_errors, stale_hits ≤ misses',
    (s) => s.failsafe <= s.load_errors && s.stale_hits <= s.misses,
    (s) => `${num(s.failsafe)} ≤ ${num(s.load_errors)}, ${num(s.stale_hits)} ≤ ${num(s.misses)}`,
  )
  law(
    'leases: lease_waited ≤ l2_hits, lease_acquired + lease_lost ≤ loads',
    (s) => s.lease_waited <= s.l2_hits && s.lease_acquired + s.lease_lost <= s.loads,
    (s) => `${num(s.lease_waited)} ≤ ${num(s.l2_hits)}, ${num(s.lease_acquired + s.lease_lost)} ≤ ${num(s.loads)}`,
  )
  law(
    'size ≤ capacity',
    (s, _, capacity) => s.size <= capacity,
    (s, _, capacity) => `${num(s.size)} ≤ ${num(capacity)}`,
  )
  const withoutL2 = f.tables.filter((t) => !t.hasL2)
  const l2Counters = (s: Stats) => s.l2_hits + s.l2_errors + s.l2_timeouts + s.l2_skipped + s.l2_corrupt
  checks.push(
    check(
      'a table without L2 counts no L2 work',
      withoutL2.every((t) => l2Counters(t.stats) === 0),
      withoutL2.map((t) => `${t.label} ${l2Counters(t.stats)}`).join(' · '),
    ),
  )

  const rule = (name: string, checked: string) => {
    const seen = f.problems.count(name)
    checks.push(check(name, seen === 0, seen === 0 ? checked : f.problems.describe(name)))
  }
  rule(RULES.neverThrows, `${num(f.workload.fetchCalls + f.workload.ops.put + f.workload.ops.invalidate)} calls`)
  rule(RULES.answerForId, `${num(f.workload.fetchCalls)} fetches`)
  rule(RULES.herd, `${num(f.workload.ops.herd)} herds, ${num(f.workload.herdCallers)} callers`)
  rule(RULES.namedRejections, 'loader errors, FetchTimeoutError, LoadTimeoutError, LeaseHolderFailedError and the caller’s own abort reason only')
  rule(RULES.changes, `${num(f.workload.ops.put + f.workload.ops.invalidate)} changes`)
  for (const category of CATEGORIES) rule(ruleOf(category), `${num(f.badInputs.tried[category])} tried`)
  rule(INTERNAL_FAULT, 'no `error` event without an id')
  rule('no bus handler threw', 'localBus onHandlerError never called')

  const isLoader = (kind: string) => kind.startsWith('loader')
  /** The promises of the kinds `which` picks: how many were made, and the pending ones by kind. */
  const promises = (which: (kind: string) => boolean) => ({
    made: Object.entries(f.promises.made).reduce((sum, [kind, n]) => sum + (which(kind) ? n : 0), 0),
    pending: Object.entries(f.promises.pending).filter(([kind]) => which(kind)),
  })
  const calls = promises((kind) => !isLoader(kind))
  checks.push(check(CALLS_SETTLED, calls.pending.length === 0, calls.pending.length === 0 ? `${num(calls.made)} promises, none pending` : `pending: ${list(calls.pending)}`))
  const loaders = promises(isLoader)
  checks.push(
    check(
      LOADERS_SETTLED,
      loaders.pending.length === 0,
      loaders.pending.length === 0 ? `${num(loaders.made)} promises, none pending` : `pending, their signal never aborted: ${list(loaders.pending)}`,
    ),
  )
  checks.push(check(WORKERS_BACK, f.workersBack, f.workersBack ? `${WORKERS} workers and the fault schedule` : 'one is still waiting: see what never settled'))
  checks.push(check('no unhandled rejection', f.escapes.rejections.length === 0, f.escapes.rejections.length === 0 ? 'none' : f.escapes.rejections.slice(0, 3).map(String).join('; ')))
  checks.push(
    check(
      'no process warning',
      f.escapes.warnings.length === 0,
      f.escapes.warnings.length === 0
        ? 'none'
        : f.escapes.warnings
            .slice(0, 3)
            .map((w) => `${w.name}: ${w.message}`)
            .join('; '),
    ),
  )
  checks.push(check('no stalled L2 call after the last heal', f.stalled === 0, `${f.stalled}`))
  checks.push(check('no timer left on the tables’ clock after close', f.leftovers.timers === 0, `${f.leftovers.timers} pending`))
  const { redisKeys, redisKeysDeleted } = f.leftovers
  checks.push(
    redisKeys === undefined
      ? { name: 'the run’s Redis keys are gone', status: 'SKIP', detail: 'no Redis table' }
      : check('the run’s Redis keys are gone', redisKeys === 0, `${num(redisKeysDeleted ?? 0)} deleted, ${num(redisKeys)} found by a second pass`),
  )

  const missing = [
    ...Object.keys(OP_MIX).filter((k) => f.workload.ops[k as keyof typeof OP_MIX] === 0),
    ...LOADER_KINDS.filter((k) => f.workload.loaders[k] === 0).map((k) => `loader ${k}`),
    ...CANCEL_POINTS.filter((k) => f.workload.cancelPoints[k] === 0).map((k) => `cancel ${k}`),
    ...f.tables
      .filter((t) => t.hasL2)
      .flatMap((t) => FAULTS.filter((fault) => fault.redisOnly !== true || t.label === 'redis').map((fault) => `${t.label}: ${fault.name}`))
      .filter((name) => (f.faults.injected[name] ?? 0) === 0),
    ...(f.badInputs.covered ? [] : [`bad inputs (${f.badInputs.count} of ${CATALOG.length} entries)`]),
  ]
  checks.push(check('every kind of work happened: operations, loaders, cancel points, faults, bad inputs', missing.length === 0, missing.length === 0 ? 'all' : `never: ${missing.join(', ')}`))

  const heapCheck = `heap after a forced GC: end ≤ middle + ${mib(HEAP_GROWTH_BOUND)}`
  if (f.heap === undefined) checks.push({ name: heapCheck, status: 'SKIP', detail: 'run node with --expose-gc to measure' })
  else {
    const { middle, end } = f.heap
    checks.push(check(heapCheck, end <= middle + HEAP_GROWTH_BOUND, `${mib(end)} vs ${mib(middle)} (${end >= middle ? '+' : '−'}${mib(Math.abs(end - middle))})`))
  }
  return checks
}
