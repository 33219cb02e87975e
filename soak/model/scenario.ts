/**
 * What one scheduled model run does: the tables' configuration and the operations, in order. Each
 * operation is issued without waiting for the ones before it; between them the scheduler releases
 * loader answers, L2 calls and bus deliveries, and the manual clock moves, in the order fast-check
 * chose. Ids come from a pool of three, so operations meet on the same ids.
 */
import fc from 'fast-check'

/** The ids every run uses. */
export const IDS = ['a', 'b', 'c'] as const
/** One of {@link IDS}. */
export type ModelId = (typeof IDS)[number]

/** How the tables are built. */
export interface ModelConfig {
  /** Two or three tables are as many processes: one memory L2 and one scheduled bus between them. */
  tables: 1 | 2 | 3
  lease: boolean
  /** 0, or ms of grace. */
  grace: number
  /** Only with grace. */
  staleWhileRevalidate: boolean
  /** A table-wide soft timeout (only meaningful with grace). */
  softTimeout: boolean
}

/** How a fetch is called. */
export type FetchMode = 'plain' | 'timeout' | 'signal' | 'soft' | 'force' | 'force+signal' | 'aborted'
/** How its loader (if it runs) answers: a value, an error, or never (until its signal aborts). */
export type LoaderMode = 'answer' | 'fail' | 'hang'

/** One operation of a run. */
export type ModelOp =
  | { type: 'fetch'; table: number; id: ModelId; mode: FetchMode; loader: LoaderMode; reportVersion: boolean }
  | { type: 'put'; table: number; id: ModelId }
  | { type: 'invalidate'; table: number; id: ModelId }
  | { type: 'clear'; table: number }
  /** Aborts the signal of the `nth` fetch with a signal so far (modulo their number). */
  | { type: 'abort'; nth: number }
  /** Moves the clock `ms`, timer by timer, letting promises settle between timers. */
  | { type: 'advance'; ms: number }
  /** Lets the scheduler release `n` tasks (fewer if fewer wait). */
  | { type: 'steps'; n: number }

/** A whole run. */
export interface ModelScenario {
  config: ModelConfig
  ops: ModelOp[]
}

const idArb = fc.constantFrom(...IDS)
const tableArb = (tables: number) => fc.nat({ max: tables - 1 })

const opArb = (tables: number): fc.Arbitrary<ModelOp> =>
  fc.oneof(
    {
      weight: 6,
      arbitrary: fc.record({
        type: fc.constant('fetch' as const),
        table: tableArb(tables),
        id: idArb,
        mode: fc.constantFrom<FetchMode>('plain', 'plain', 'timeout', 'signal', 'soft', 'force', 'force+signal', 'aborted'),
        loader: fc.constantFrom<LoaderMode>('answer', 'answer', 'answer', 'fail', 'hang'),
        reportVersion: fc.boolean(),
      }),
    },
    { weight: 2, arbitrary: fc.record({ type: fc.constant('put' as const), table: tableArb(tables), id: idArb }) },
    { weight: 2, arbitrary: fc.record({ type: fc.constant('invalidate' as const), table: tableArb(tables), id: idArb }) },
    { weight: 1, arbitrary: fc.record({ type: fc.constant('clear' as const), table: tableArb(tables) }) },
    { weight: 1, arbitrary: fc.record({ type: fc.constant('abort' as const), nth: fc.nat({ max: 20 }) }) },
    { weight: 2, arbitrary: fc.record({ type: fc.constant('advance' as const), ms: fc.integer({ min: 1, max: 60 }) }) },
    { weight: 4, arbitrary: fc.record({ type: fc.constant('steps' as const), n: fc.integer({ min: 1, max: 6 }) }) },
  )

const configArb = (tables: fc.Arbitrary<ModelConfig['tables']>, lease: fc.Arbitrary<boolean>): fc.Arbitrary<ModelConfig> =>
  fc
    .record({ tables, lease, grace: fc.constantFrom(0, 0, 40), swr: fc.boolean(), softTimeout: fc.boolean() })
    .map(({ tables, lease, grace, swr, softTimeout }) => ({ tables, lease, grace, staleWhileRevalidate: grace > 0 && swr, softTimeout: grace > 0 && softTimeout }))

/** Scenarios of up to `maxOps` operations, on one or two tables. */
export function scenarioArb(maxOps = 40): fc.Arbitrary<ModelScenario> {
  return scenariosOf(configArb(fc.constantFrom<1 | 2>(1, 2), fc.boolean()), maxOps)
}

/**
 * Scenarios on three tables with leases: a holder whose lease runs out while its loader is slow, a
 * second process that takes the lease over, and a third that waits on the new holder's lease.
 */
export function leaseTakeoverArb(maxOps = 40): fc.Arbitrary<ModelScenario> {
  return scenariosOf(configArb(fc.constant(3), fc.constant(true)), maxOps)
}

function scenariosOf(configs: fc.Arbitrary<ModelConfig>, maxOps: number): fc.Arbitrary<ModelScenario> {
  return configs.chain((config) => fc.record({ config: fc.constant(config), ops: fc.array(opArb(config.tables), { minLength: 1, maxLength: maxOps }) }))
}
