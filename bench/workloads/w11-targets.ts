import { num, sig } from '../lib/format.js'
import type { TargetRow } from '../targets.js'
import type { WorkloadResult } from './context.js'
import { PER_ID_FLOOR } from '../contenders/batch/floor-promise-per-id.js'
import { BATCH_PEERS, BATCH_SUBJECTS } from './w11-batch.js'

type Figure = 'originCalls' | 'pagesPerSec'

/** A W11 figure of one contender, when it was measured. */
function figure(result: WorkloadResult, name: string, key: Figure): number | undefined {
  const value = result.metrics.get(name)?.[key]
  return value !== undefined && Number.isFinite(value) ? value : undefined
}

/** Of `names`, the one whose `key` is best by `better`, with its figure. */
function best(result: WorkloadResult, names: readonly string[], key: Figure, better: (a: number, b: number) => boolean): [string, number] | undefined {
  let out: [string, number] | undefined
  for (const name of names) {
    const value = figure(result, name, key)
    if (value !== undefined && (out === undefined || better(value, out[1]))) out = [name, value]
  }
  return out
}

/**
 * W11's targets, from one run, for each of EchoStore's batched reads (`getMany`, and `get` per id
 * with the table's `batchLoader`): it makes the fewest origin calls of every reader but EchoStore's
 * other batched read, and its pages/s is at least 1.5× the best peer's.
 */
export function batchTargets(result: WorkloadResult | undefined): TargetRow[] {
  const subjects = result === undefined ? [] : [...result.metrics.keys()].filter((name) => BATCH_SUBJECTS.includes(name))
  const calls = (name: string) => `${name}: origin calls ≤ the fewest of the other readers'`
  const speed = (name: string) => `${name}: pages/s ≥ 1.5× the best peer's`
  const notMeasured = { workload: 'W11', measured: 'n/a', ratio: 'n/a', verdict: 'not measured' } as const
  if (result === undefined || subjects.length === 0)
    return [
      { ...notMeasured, target: calls(BATCH_SUBJECTS[0]) },
      { ...notMeasured, target: speed(BATCH_SUBJECTS[0]) },
    ]
  // The floor is a reference written for the bench, not a reader anyone ships: no reader is held to its calls.
  const others = [...result.metrics.keys()].filter((name) => !BATCH_SUBJECTS.includes(name) && name !== PER_ID_FLOOR)
  const fewest = best(result, others, 'originCalls', (a, b) => a < b)
  const fastest = best(result, BATCH_PEERS, 'pagesPerSec', (a, b) => a > b)
  return subjects.flatMap((name): TargetRow[] => {
    const es = { calls: figure(result, name, 'originCalls'), pages: figure(result, name, 'pagesPerSec') }
    const out: TargetRow[] = []
    if (es.calls === undefined || fewest === undefined) out.push({ ...notMeasured, target: calls(name) })
    else {
      const r = fewest[1] === 0 ? undefined : es.calls / fewest[1]
      out.push({
        workload: 'W11',
        target: calls(name),
        measured: `${num(es.calls)} vs ${num(fewest[1])} (${fewest[0]})`,
        ratio: r === undefined ? '—' : `${sig(r)}×`,
        verdict: es.calls <= fewest[1] ? 'pass' : 'FAIL',
      })
    }
    if (es.pages === undefined || fastest === undefined) out.push({ ...notMeasured, target: speed(name) })
    else {
      const r = es.pages / fastest[1]
      out.push({ workload: 'W11', target: speed(name), measured: `${num(es.pages)} vs ${num(fastest[1])} pages/s (${fastest[0]})`, ratio: `${sig(r)}×`, verdict: r >= 1.5 ? 'pass' : 'FAIL' })
    }
    return out
  })
}
