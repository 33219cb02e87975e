import { num, sig } from '../lib/format.js'
import type { TargetRow } from '../targets.js'
import type { WorkloadResult } from './context.js'
import { BATCH_PEERS, BATCH_SUBJECT } from './w11-batch.js'

/** A W11 figure of one contender, when it was measured. */
function figure(result: WorkloadResult, name: string, key: 'originCalls' | 'pagesPerSec'): number | undefined {
  const value = result.metrics.get(name)?.[key]
  return value !== undefined && Number.isFinite(value) ? value : undefined
}

/**
 * W11's targets, from one run: EchoStore `getMany` makes the fewest origin calls of every reader
 * (ratio to the fewest of the others), and its pages/s is at least 1.5× the best peer's.
 */
export function batchTargets(result: WorkloadResult | undefined): TargetRow[] {
  const calls = { workload: 'W11', target: 'getMany: origin calls ≤ the fewest of every other reader' }
  const speed = { workload: 'W11', target: "getMany: pages/s ≥ 1.5× the best peer's" }
  const notMeasured = { measured: 'n/a', ratio: 'n/a', verdict: 'not measured' } as const
  const es = result === undefined ? undefined : { calls: figure(result, BATCH_SUBJECT, 'originCalls'), pages: figure(result, BATCH_SUBJECT, 'pagesPerSec') }
  if (result === undefined || es?.calls === undefined || es.pages === undefined) return [{ ...calls, ...notMeasured }, { ...speed, ...notMeasured }]

  const others = [...result.metrics.keys()].filter((name) => name !== BATCH_SUBJECT && figure(result, name, 'originCalls') !== undefined)
  const fewest = others.length > 0 ? others.reduce((a, b) => (figure(result, b, 'originCalls')! < figure(result, a, 'originCalls')! ? b : a)) : undefined
  const peers = BATCH_PEERS.filter((name) => figure(result, name, 'pagesPerSec') !== undefined)
  const fastest = peers.length > 0 ? peers.reduce((a, b) => (figure(result, b, 'pagesPerSec')! > figure(result, a, 'pagesPerSec')! ? b : a)) : undefined
  const out: TargetRow[] = []
  if (fewest === undefined) out.push({ ...calls, ...notMeasured })
  else {
    const theirs = figure(result, fewest, 'originCalls')!
    const r = theirs === 0 ? undefined : es.calls / theirs
    out.push({ ...calls, measured: `${num(es.calls)} vs ${num(theirs)} (${fewest})`, ratio: r === undefined ? '—' : `${sig(r)}×`, verdict: es.calls <= theirs ? 'pass' : 'FAIL' })
  }
  if (fastest === undefined) out.push({ ...speed, ...notMeasured })
  else {
    const theirs = figure(result, fastest, 'pagesPerSec')!
    const r = es.pages / theirs
    out.push({ ...speed, measured: `${num(es.pages)} vs ${num(theirs)} pages/s (${fastest})`, ratio: `${sig(r)}×`, verdict: r >= 1.5 ? 'pass' : 'FAIL' })
  }
  return out
}
