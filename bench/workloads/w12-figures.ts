import type { DayRun } from './w12-instances.js'
import type { DayPlan } from './w12-trace.js'

/** What W12 reports of one contender's day in one shape. */
export interface DayFigures {
  reads: number
  /** Reads that rejected, answered no value, answered another id's row, or never answered. */
  failed: number
  /** Failed reads that started while the origin was down. */
  failedInOutage: number
  /**
   * Failed reads a coherent cache with this grace could have answered: before the read started, the
   * origin had answered (to any instance) a value at least as new as every update of the id that had
   * finished, read at most ttl + grace earlier.
   */
  failedAnswerable: number
  /** p99 over the reads that arrived after the day's opening (the cold fill of its first OPENING_MS). */
  p99AfterOpening: number
  p50: number
  p99: number
  max: number
  /** Reads that returned a version older than an update of their id that had finished before they started. */
  stale: number
  /** For those: the most ms between the update finishing and the stale read starting. */
  staleLagMaxMs: number
  /** The oldest value (ms since the origin read it) answered to a read that started during the outage. */
  oldestInOutageMs: number
  updates: number
  updatesFailed: number
  originCalls: number
  originPeak: number
  originInOutage: number
  /** Origin calls per BIN_MS from the day's start. */
  perBin: number[]
  /** Redis commands over the day (INFO commandstats delta); NaN in the one-instance shape. */
  redisCommands: number
  /** The three commands Redis ran most, with their counts. */
  redisTop: string
  /** Every command Redis ran over the day, with its count, most first (empty without Redis). */
  redisByCommand: [string, number][]
  redisCpuMs: number
  /** CPU per instance over the day (user + system), ms. */
  cpuMs: number[]
  /** Longest an event waited past its instant to fire, ms (event-loop lag in the busiest instance). */
  lagMaxMs: number
  /** The machine's 1-minute load average as the day ended. */
  loadAverage: number
  /** The library's own counters, summed over instances (empty when it keeps none). */
  counters: Record<string, number>
}

/** The day's opening: every cache is cold and the hottest rows fill together. */
export const OPENING_MS = 500

/** Binary search: the last index in `done` (ascending) below `t`, or −1. */
function lastBefore(done: readonly number[], t: number): number {
  let lo = 0
  let hi = done.length
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (done[mid]! < t) lo = mid + 1
    else hi = mid
  }
  return lo - 1
}

/** The origin's successful answers per key, in answer order. */
function answersByKey(run: DayRun): Map<number, { at: number[]; version: number[]; loadedAt: number[] }> {
  const out = new Map<number, { at: number[]; version: number[]; loadedAt: number[] }>()
  const a = run.origin.answers
  for (let i = 0; i < a.key.length; i++) {
    let list = out.get(a.key[i]!)
    if (list === undefined) out.set(a.key[i]!, (list = { at: [], version: [], loadedAt: [] }))
    list.at.push(a.at[i]!)
    list.version.push(a.version[i]!)
    list.loadedAt.push(a.loadedAt[i]!)
  }
  return out
}

/** The figures of one day from what its instances and its origin reported; `grace` is the stale window every contender with one was given. */
export function dayFigures(plan: DayPlan, run: DayRun, grace: number): DayFigures {
  // Every update that finished, per key, in finishing order.
  const updates = new Map<number, { done: number[]; version: number[] }>()
  const flat: { key: number; done: number; version: number }[] = []
  for (const r of run.reports) for (let i = 0; i < r.updates.count; i++) flat.push({ key: r.updates.key[i]!, done: r.updates.done[i]!, version: r.updates.version[i]! })
  flat.sort((a, b) => a.done - b.done)
  for (const u of flat) {
    let list = updates.get(u.key)
    if (list === undefined) updates.set(u.key, (list = { done: [], version: [] }))
    list.done.push(u.done)
    // An update finishing after a newer one (their invalidations crossed) does not lower the bar.
    list.version.push(Math.max(u.version, list.version.at(-1) ?? 0))
  }
  const answers = answersByKey(run)
  const inOutage = (t: number) => t >= plan.outage.from && t < plan.outage.to
  /** The version a read starting at `started` must see: the newest update of `key` finished before it (0 when none). */
  const bar = (key: number, started: number) => {
    const list = updates.get(key)
    if (list === undefined) return 0
    const j = lastBefore(list.done, started)
    return j >= 0 ? list.version[j]! : 0
  }
  const answerable = (key: number, started: number, needed: number) => {
    const list = answers.get(key)
    if (list === undefined) return false
    for (let j = lastBefore(list.at, started); j >= 0 && list.at[j]! >= started - plan.ttl - grace; j--) {
      if (list.version[j]! >= needed && started - list.loadedAt[j]! <= plan.ttl + grace) return true
    }
    return false
  }
  let reads = 0
  let failed = 0
  let failedInOutage = 0
  let failedAnswerable = 0
  let stale = 0
  let staleLagMaxMs = 0
  let oldest = 0
  const latencies: number[] = []
  const afterOpening: number[] = []
  for (const r of run.reports) {
    const x = r.reads
    for (let i = 0; i < x.count; i++) {
      reads++
      const started = x.started[i]!
      latencies.push(x.latency[i]!)
      if (x.arrival[i]! >= OPENING_MS) afterOpening.push(x.latency[i]!)
      const version = x.version[i]!
      const needed = bar(x.key[i]!, started)
      if (version < 0) {
        failed++
        if (inOutage(started)) failedInOutage++
        if (answerable(x.key[i]!, started, needed)) failedAnswerable++
        continue
      }
      if (version < needed) {
        stale++
        const list = updates.get(x.key[i]!)!
        const j = list.version.findIndex((v) => v > version)
        staleLagMaxMs = Math.max(staleLagMaxMs, started - list.done[j]!)
      }
      if (inOutage(started)) oldest = Math.max(oldest, started - x.loadedAt[i]!)
    }
    failed += r.unsettled
  }
  latencies.sort((a, b) => a - b)
  afterOpening.sort((a, b) => a - b)
  const rank = (sorted: number[], p: number) => (sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!)
  const at = (p: number) => rank(latencies, p)
  const counters: Record<string, number> = {}
  for (const r of run.reports) for (const [name, n] of Object.entries(r.counters)) counters[name] = (counters[name] ?? 0) + n
  const commands = [...run.redisCommands.entries()].sort((a, b) => b[1] - a[1])
  return {
    reads,
    failed,
    failedInOutage,
    failedAnswerable,
    p99AfterOpening: rank(afterOpening, 99),
    p50: at(50),
    p99: at(99),
    max: latencies.at(-1) ?? Number.NaN,
    stale,
    staleLagMaxMs,
    oldestInOutageMs: oldest,
    updates: flat.length,
    updatesFailed: run.reports.reduce((s, r) => s + r.updates.failed, 0),
    originCalls: run.origin.calls,
    originPeak: run.origin.peakConcurrent,
    originInOutage: run.origin.outageCalls,
    perBin: run.origin.perBin,
    redisCommands: commands.length === 0 ? Number.NaN : commands.reduce((s, [, n]) => s + n, 0),
    redisTop: commands
      .slice(0, 3)
      .map(([c, n]) => `${c} ${n}`)
      .join(', '),
    redisByCommand: commands,
    redisCpuMs: run.redisCpuMs,
    cpuMs: run.reports.map((r) => r.cpuMs),
    lagMaxMs: Math.max(...run.reports.map((r) => r.lagMaxMs)),
    counters,
    loadAverage: run.loadAverage,
  }
}
