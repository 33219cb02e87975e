import { describe, expect, it } from 'vitest'
import { evaluateTargets, type Results } from '../bench/targets.js'
import type { DayReport } from '../bench/w12-day-child.js'
import { dayMetric, INSTANCES } from '../bench/workloads/w12-day.js'
import { dayFigures } from '../bench/workloads/w12-figures.js'
import type { DayRun } from '../bench/workloads/w12-instances.js'
import { buildTrace, campaignKey, dayPlan, exists, keyId, READ, UPDATE, UPDATE_THEN_READ, CATALOGUE } from '../bench/workloads/w12-trace.js'

const plan = { ...dayPlan(false), outage: { from: 100, to: 200 } }

/** One instance's report with the given reads and updates (instants in ms after t0). */
function report(reads: { key: number; started: number; version: number; loadedAt?: number; latency?: number }[], updates: { key: number; version: number; done: number }[] = []): DayReport {
  return {
    instance: 0,
    reads: {
      key: Int32Array.from(reads.map((r) => r.key)),
      arrival: Float64Array.from(reads.map((r) => r.started)),
      started: Float64Array.from(reads.map((r) => r.started)),
      latency: Float64Array.from(reads.map((r) => r.latency ?? 1)),
      version: Int32Array.from(reads.map((r) => r.version)),
      loadedAt: Float64Array.from(reads.map((r) => r.loadedAt ?? r.started)),
      count: reads.length,
    },
    updates: {
      key: Int32Array.from(updates.map((u) => u.key)),
      version: Int32Array.from(updates.map((u) => u.version)),
      done: Float64Array.from(updates.map((u) => u.done)),
      count: updates.length,
      failed: 0,
    },
    unsettled: 0,
    cpuMs: 10,
    lagMaxMs: 0,
    counters: {},
  }
}

/** A run of those reports, with the origin's successful answers. */
function run(reports: DayReport[], answers: { key: number; at: number; version: number; loadedAt: number }[] = []): DayRun {
  return {
    reports,
    origin: {
      calls: answers.length,
      peakConcurrent: 1,
      outageCalls: 0,
      failedCalls: 0,
      perBin: [],
      queueMaxMs: 0,
      answers: { key: answers.map((a) => a.key), at: answers.map((a) => a.at), version: answers.map((a) => a.version), loadedAt: answers.map((a) => a.loadedAt) },
    },
    redisCommands: new Map(),
    redisCpuMs: Number.NaN,
    ends: [],
    loadAverage: 0,
  }
}

describe('W12 trace', () => {
  it('is the same for the same plan, in time order, every event addressed to one of the instances', () => {
    const a = buildTrace(plan)
    const b = buildTrace(plan)
    expect(a.length).toBeGreaterThan(10_000)
    expect([...a.key]).toEqual([...b.key])
    expect([...a.at]).toEqual([...b.at])
    for (let i = 1; i < a.length; i++) expect(a.at[i]!).toBeGreaterThanOrEqual(a.at[i - 1]!)
    expect(new Set(a.instance)).toEqual(new Set([0, 1, 2, 3]))
  })

  it('follows the first update of each quick pair with a second one on the same id and instance, the pair gap later', () => {
    const t = buildTrace(plan)
    const firsts = [...t.kind.keys()].filter((i) => t.kind[i] === UPDATE_THEN_READ)
    expect(firsts.length).toBeGreaterThan(0)
    for (const i of firsts) {
      const j = [...t.kind.keys()].find((k) => k > i && t.kind[k] === UPDATE && t.key[k] === t.key[i] && t.at[k] === t.at[i]! + plan.pairGapMs)
      expect(j, `second update of the pair at ${t.at[i]}`).toBeDefined()
      expect(t.instance[j!]).toBe(t.instance[i])
    }
  })

  it('reads the hottest rows together at t = 0, and each burst key by as many readers at one instant', () => {
    const t = buildTrace(plan)
    const opening = [...t.at.keys()].filter((i) => t.at[i] === 0 && t.kind[i] === READ)
    expect(opening.length).toBeGreaterThanOrEqual(plan.hotRows)
    for (const burst of plan.bursts) {
      for (const n of burst.keys) {
        const readers = [...t.key.keys()].filter((i) => t.key[i] === campaignKey(n) && t.at[i] === burst.at).length
        expect(readers).toBe(plan.readersPerBurstKey)
      }
    }
  })

  it('names missing ids apart from stock rows and campaign keys', () => {
    expect(exists(0)).toBe(true)
    expect(exists(CATALOGUE)).toBe(false)
    expect(exists(campaignKey(0))).toBe(true)
    expect(keyId(0)).toBe('t0:d0:p0')
    expect(keyId(campaignKey(2))).toBe('campaign:2')
    expect(keyId(CATALOGUE)).toMatch(/:x0$/)
  })
})

describe('W12 figures', () => {
  it('count a read as stale only when it started after an update that finished and returned an older version', () => {
    const r = report(
      [
        { key: 5, started: 10, version: 1 }, // before the update: fine
        { key: 5, started: 21, version: 1 }, // after it finished: stale
        { key: 5, started: 22, version: 2 }, // the new version: fine
        { key: 6, started: 30, version: 1 }, // another id: fine
      ],
      [{ key: 5, version: 2, done: 20 }],
    )
    const f = dayFigures(plan, run([r]), 1_000)
    expect(f.reads).toBe(4)
    expect(f.stale).toBe(1)
    expect(f.staleLagMaxMs).toBe(1)
    expect(f.failed).toBe(0)
  })

  it('keep the bar at the newest version when two updates of an id finish out of order', () => {
    const r = report(
      [{ key: 5, started: 40, version: 2 }],
      [
        { key: 5, version: 3, done: 20 },
        { key: 5, version: 2, done: 30 },
      ],
    )
    expect(dayFigures(plan, run([r]), 1_000).stale).toBe(1)
  })

  it('call a failed read answerable only when the origin had answered the current version within ttl + grace before it', () => {
    const reads = [
      { key: 1, started: 150, version: -1 }, // answered at 50 with version 1, no update: answerable
      { key: 2, started: 150, version: -1 }, // never answered: not answerable
      { key: 3, started: 150, version: -1 }, // answered at 50, then an update finished at 60: not answerable
    ]
    const r = report(reads, [{ key: 3, version: 2, done: 60 }])
    const answers = [
      { key: 1, at: 50, version: 1, loadedAt: 45 },
      { key: 3, at: 50, version: 1, loadedAt: 45 },
    ]
    const f = dayFigures(plan, run([r], answers), 1_000)
    expect(f.failed).toBe(3)
    expect(f.failedInOutage).toBe(3)
    expect(f.failedAnswerable).toBe(1)
  })

  it('give the oldest value answered during the outage, and percentiles over every read', () => {
    const r = report([
      { key: 1, started: 120, version: 1, loadedAt: 20, latency: 2 },
      { key: 2, started: 150, version: 1, loadedAt: 140, latency: 4 },
      { key: 3, started: 250, version: 1, loadedAt: 0, latency: 9 },
    ])
    const f = dayFigures(plan, run([r]), 1_000)
    expect(f.oldestInOutageMs).toBe(100)
    expect(f.p50).toBe(4)
    expect(f.max).toBe(9)
  })
})

describe('W12 targets', () => {
  /** W12 metrics: per contender, figures for one instance and for four. */
  function w12(rows: Record<string, Partial<Record<'calls' | 'failed' | 'p99' | 'stale' | 'wrong' | 'redis', [number | undefined, number | undefined]>>>): Results {
    const metrics = new Map<string, Record<string, number>>()
    for (const [name, figures] of Object.entries(rows)) {
      const m: Record<string, number> = {}
      for (const [key, [one, four]] of Object.entries(figures) as [Parameters<typeof dayMetric>[0], [number | undefined, number | undefined]][]) {
        if (one !== undefined) m[dayMetric(key, 1)] = one
        if (four !== undefined) m[dayMetric(key, INSTANCES)] = four
      }
      metrics.set(name, m)
    }
    return { W12: { metrics, section: { id: 'W12', title: '', method: '', tables: [], notes: [] } } }
  }
  const rows = (results: Results) => evaluateTargets(results).filter((t) => t.workload === 'W12')

  it('pass and fail each target against the best peer, EchoStore one instance, and the run without lease', () => {
    const out = rows(
      w12({
        echostore: { calls: [100, 104], failed: [10, 10], p99: [50, 60], stale: [0, 2], wrong: [10, 12], redis: [undefined, 260] },
        'echostore, no lease': { calls: [undefined, 110], p99: [undefined, 50], redis: [undefined, 100] },
        'lru-cache': { calls: [120, 200], failed: [12, 9], p99: [40, 70], stale: [0, 50], wrong: [12, 59] },
        bentocache: { calls: [110, 116], failed: [8, 20], p99: [70, 90], stale: [30, 10], wrong: [38, 30] },
      }),
    )
    const expected: [string, string][] = [
      ['one instance: origin calls', 'pass'],
      ['one instance: failed reads ≤', 'FAIL'],
      ['one instance: no read', 'pass'],
      ['one instance: failed reads +', 'info'],
      ['one instance: p99', 'FAIL'],
      ['4 instances: origin calls ≤ 0.90', 'pass'],
      ['4 instances: origin calls ≤ 1.03', 'FAIL'],
      ['4 instances: failed reads ≤', 'FAIL'],
      ['4 instances: no read', 'FAIL'],
      ['4 instances: p99', 'pass'],
      ['4 instances, lease: fewer', 'pass'],
      ['4 instances, lease: Redis', 'FAIL'],
      ['4 instances, lease: p99', 'FAIL'],
    ]
    expect(expected.map(([prefix]) => [prefix, out.find((t) => t.target.startsWith(prefix))?.verdict])).toEqual(expected)
    expect(out.find((t) => t.target.startsWith('4 instances: origin calls ≤ 0.90'))).toMatchObject({ measured: '104 vs 116 (bentocache)', ratio: '0.90×' })
  })

  it('say "not measured" for every W12 target without W12', () => {
    const out = rows({})
    expect(out.length).toBe(14)
    expect(new Set(out.map((t) => t.verdict))).toEqual(new Set(['not measured']))
  })
})
