import { performance } from 'node:perf_hooks'
import type { Contender, Row } from '../contenders/types.js'
import { num, pm, ratio, sig, type Table } from '../lib/format.js'
import { interleave } from '../lib/interleave.js'
import { ROW } from '../lib/row.js'
import { median, spreadPct } from '../lib/stats.js'
import { floorMedian, floorNamed, type BenchContext, type WorkloadResult } from './context.js'

/** Untimed herds run this long (at least one) before the timed ones of each repetition. */
const WARM_MS = 100

/** Herd sizes, and herds per repetition at scale 1 (each on a fresh cold id). */
const HERDS: readonly { n: number; perRep: number }[] = [
  { n: 200, perRep: 50 },
  { n: 10_000, perRep: 5 },
]

/**
 * W2 herd: N concurrent cold fetches of one id, N = 200 and 10,000. The loader is latched: it
 * returns a promise opened only after all N fetches were issued, so every waiter arrives while
 * the load is in flight. Figures: loader calls per herd (must be 1), µs per waiter from the first
 * call to the last answer, ns per call (the N calls alone, without their answers), and whether all N
 * got the identical object.
 */
export async function runW2(ctx: BenchContext): Promise<WorkloadResult> {
  const metrics = new Map<string, Record<string, number>>(ctx.contenders.map((c) => [c.name, {}]))
  const tables: Table[] = []
  const floor = floorNamed(ctx, 'floor:single-flight')

  for (const { n, perRep } of HERDS) {
    const herds = Math.max(1, Math.round(perRep * ctx.cfg.scale))
    async function measure(contender: Contender, rep: number) {
      let loads = 0
      let latch: Promise<Row> = Promise.resolve(ROW)
      const cache = contender.create({ ttl: 600_000, capacity: herds + 1_024, loader: () => (loads++, latch) })
      const waiting = new Array<Promise<Row | undefined>>(n)
      async function herd(id: string): Promise<{ ms: number; issueMs: number; identical: boolean }> {
        let open!: (row: Row) => void
        latch = new Promise<Row>((resolve) => (open = resolve))
        const start = performance.now()
        for (let i = 0; i < n; i++) waiting[i] = cache.fetch(id)
        const issued = performance.now()
        open(ROW)
        const answers = await Promise.all(waiting)
        return { ms: performance.now() - start, issueMs: issued - start, identical: answers.every((a) => a === ROW) }
      }
      // Untimed herds first (on other ids), so the timed ones measure compiled code, as W1 does.
      const warmUntil = performance.now() + WARM_MS
      for (let w = 0; w === 0 || performance.now() < warmUntil; w++) await herd(`warm-${rep}-${w}`)
      loads = 0
      let totalMs = 0
      let issueMs = 0
      let identical = true
      for (let h = 0; h < herds; h++) {
        const one = await herd(`herd-${rep}-${h}`)
        totalMs += one.ms
        issueMs += one.issueMs
        identical &&= one.identical
      }
      await cache.close()
      return { usPerWaiter: (totalMs * 1000) / (n * herds), nsPerCall: (issueMs * 1e6) / (n * herds), loadsPerHerd: loads / herds, identical }
    }
    const runs = await interleave(`W2 herd N=${num(n)}`, ctx.contenders, ctx.cfg.reps, measure)
    const floorUs = floorMedian(floor, runs, (r) => r.usPerWaiter)
    const rows: string[][] = []
    for (const contender of ctx.contenders) {
      const list = runs.get(contender.name)!
      const us = list.map((r) => r.usPerWaiter)
      const usPerWaiter = median(us)
      const nsPerCall = median(list.map((r) => r.nsPerCall))
      const loads = Math.max(...list.map((r) => r.loadsPerHerd))
      Object.assign(metrics.get(contender.name)!, { [`us${n}`]: usPerWaiter, [`callNs${n}`]: nsPerCall, [`loads${n}`]: loads })
      rows.push([
        contender.name,
        num(loads, Number.isInteger(loads) ? 0 : 1),
        sig(usPerWaiter),
        pm(spreadPct(us)),
        ratio(usPerWaiter, floorUs),
        sig(nsPerCall),
        list.every((r) => r.identical) ? 'yes' : 'NO',
      ])
    }
    tables.push({
      caption: `**N = ${num(n)}** (${herds} herd${herds === 1 ? '' : 's'} per repetition)`,
      headers: ['contender', 'loader calls / herd (worst rep)', 'µs/waiter', 'spread', '× floor:single-flight', 'ns per call (the N calls alone)', 'all got the same object'],
      rows,
    })
  }

  return {
    metrics,
    section: {
      id: 'W2',
      title: 'herd',
      method: `N concurrent cold \`fetch(id)\` of one id with a latched loader (opened once all N were issued); µs per waiter = time from the first call to the last answer / N, over timed herds that follow ${WARM_MS} ms of untimed herds on other ids in the same cache. Median over ${ctx.cfg.reps} interleaved repetitions. × floor is against the promise-map single-flight floor. The Map floor has no single-flight: its loader calls show the herd uncoalesced. ns per call is the time of the N calls alone, before the load is opened: the part of a waiter's cost the cache decides; the rest is the N answers' promise jobs, the same work in every contender.`,
      tables,
      notes: [],
    },
  }
}
