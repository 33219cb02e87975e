/**
 * The scheduled model test at soak scale: as many schedules as fit in a time budget, from the
 * soak's seed, each judged as in `npm test` (see `run.ts`). A failing schedule is reported with the
 * seed and path that replay it (`fc.assert(property, { seed, path })`), to be kept as a regression case.
 */
import fc from 'fast-check'
import { runScenario } from './run.js'
import { scenarioArb } from './scenario.js'

/** What the model part of a soak ran and found. */
export interface ModelFigures {
  schedules: number
  operations: number
  /** The first failing schedule, shrunk, with what it broke; undefined when every schedule passed. */
  failure: { seed: number; path: string; problems: string[]; scenario: string; schedule: string } | undefined
}

/** Runs scheduled model runs for about `ms` of real time from `seed`. */
export async function soakModel(ms: number, seed: number): Promise<ModelFigures> {
  let operations = 0
  // The last failing run's: after shrinking, the smallest one's.
  let failed: { problems: string[]; scenario: string; schedule: string } | undefined
  const result = await fc.check(
    fc.asyncProperty(scenarioArb(), fc.scheduler(), async (scenario, scheduler) => {
      operations += scenario.ops.length
      const found = await runScenario(scenario, scheduler)
      if (found.length > 0) failed = { problems: found, scenario: JSON.stringify(scenario), schedule: String(scheduler) }
      return found.length === 0
    }),
    { numRuns: Number.MAX_SAFE_INTEGER, interruptAfterTimeLimit: ms, markInterruptAsFailure: false, seed },
  )
  const failure = result.failed && failed !== undefined ? { seed: result.seed, path: result.counterexamplePath ?? '', ...failed } : undefined
  return { schedules: result.numRuns, operations, failure }
}
