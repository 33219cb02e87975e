import type { Contender } from '../contenders/types.js'
import type { BenchConfig } from '../lib/config.js'
import type { Section } from '../lib/format.js'
import { median } from '../lib/stats.js'

/** What every workload gets: the knobs and the loaded contenders (floors first). */
export interface BenchContext {
  cfg: BenchConfig
  contenders: Contender[]
}

/** Per contender, the named figures the targets read (medians over repetitions). */
export type Metrics = Map<string, Record<string, number>>

/** What every workload returns: its report section and its figures. */
export interface WorkloadResult {
  section: Section
  metrics: Metrics
}

/** The floor every figure of a workload is also given against; undefined when it was skipped. */
export function floorNamed(ctx: BenchContext, name: 'floor:map' | 'floor:single-flight'): Contender | undefined {
  return ctx.contenders.find((c) => c.name === name)
}

/** The median of `pick` over the repetitions of the floor `floor`, or NaN when that floor was skipped. */
export function floorMedian<R>(floor: Contender | undefined, runs: Map<string, R[]>, pick: (run: R) => number): number {
  const list = floor !== undefined ? runs.get(floor.name) : undefined
  return list !== undefined ? median(list.map(pick)) : Number.NaN
}
