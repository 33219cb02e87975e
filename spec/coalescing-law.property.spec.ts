/**
 * The coalescing law, as properties over every interleaving fast-check's scheduler can produce:
 * concurrent misses on one id coalesce onto a single in-flight load, every waiter reads that
 * flight's one answer (the same object, or the same error), and different ids and tables never
 * share a flight. The counter laws in the README are checked at every quiescent point.
 *
 * The properties grow in steps, like fast-check's examples/005-race: 2 callers of one id, N callers
 * of one id, N callers over a few ids and two tables, then rows that expire under a manual clock,
 * then the coalescing gate toggled mid-run.
 *
 * How a run goes: every fetch call, clock move and gate toggle is a scheduled task, so callers race;
 * every loader call is a scheduled function (`load(table, id, byFetch, outcome)`) that the scheduler
 * settles in any order. A loader never rejects through the scheduler (an eagerly created rejected
 * promise would surface as an unhandled rejection before its release): the scheduled step resolves,
 * and the loader throws after awaiting it.
 *
 * Two oracles:
 * - trivial ones, which need nothing from the table: with coalescing on, a loader is never called
 *   for an id while an earlier load of that id is still pending at the origin; with rows that never
 *   expire, every load of an id but the last one failed; each answer is the token of a load of the
 *   same table and id.
 * - a model of flight generations. At each fetch the model knows whether the id has a live row
 *   (a hit), a joinable flight in progress (a join), or neither (a new flight, whose loader must be
 *   this fetch's own). A flight ends in the model when the table emits its `fill` / `error` event,
 *   which the owner emits in the same mailbox turn as it answers the waiters. Each loader call makes
 *   a unique token object (or a unique Error), so "every waiter of a generation got the one answer"
 *   is an identity check (`===`).
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { type Id, type LoaderContext, type Stats, type Table, createTable } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { outcome, settle } from './support/latch.js'

// ---- scenarios ----

type Outcome = 'value' | 'absent' | 'error'
type FetchStep = { kind: 'fetch'; table: number; id: Id; outcome: Outcome; viaOptions: boolean }
type AdvanceStep = { kind: 'advance'; ms: number }
type GateStep = { kind: 'gate'; table: number; on: boolean }
type Step = FetchStep | AdvanceStep | GateStep

interface Scenario {
  /** How many tables share the clock (their names are `A`, `B`). */
  tables: number
  ttl: number
  negativeTtl: number
  /** Each caller runs its steps in order; callers interleave with each other and with the loads. */
  callers: Step[][]
}

/** A value a loader call answers with: unique per call, so identity tells generations apart. */
interface Token {
  readonly table: string
  readonly id: Id
  readonly byFetch: number
}

const TABLE_NAMES = ['A', 'B'] as const
const ID_POOL: readonly Id[] = ['a', 'b', 1, '1'] // 1 and '1' are different ids
/** Rows that never expire within a run (the clock only moves in the clock variant, and not this far). */
const FOREVER = 1_000_000_000

const keyOf = (table: number, id: Id) => `${TABLE_NAMES[table]}/${typeof id === 'number' ? id : JSON.stringify(id)}`

function label(step: Step, n: number): string {
  switch (step.kind) {
    case 'fetch':
      return `fetch#${n} ${keyOf(step.table, step.id)}${step.viaOptions ? ' {}' : ''} (its loader: ${step.outcome})`
    case 'advance':
      return `clock +${step.ms}ms`
    case 'gate':
      return `${TABLE_NAMES[step.table]}.setCoalescing(${step.on})`
  }
}

// ---- the run and its model ----

/** One loader call, as the origin saw it. */
interface LoadCall {
  key: string
  table: number
  /** The fetch whose loader this is (only a flight's first caller's loader may run). */
  byFetch: number
  /** The id the table passed to the loader. */
  idArg: Id
  context: LoaderContext
  outcome: Outcome
  /** The token, the Error, or `undefined` for "absent". */
  answer: Token | Error | undefined
  /** The scheduler has released this load (its result is on its way to the owner). */
  released: boolean
  /** Release order, and the clock when it happened. */
  releasedAt: number
  releasedClock: number
}

/** A flight generation of the model. */
interface ModelFlight {
  key: string
  starter: number
  /** Started while the gate was on: joinable while in progress and the gate is on. */
  joinable: boolean
  open: boolean
  call: LoadCall | undefined
}

/**
 * A row of the model. Its expiry is drawn between the load's return and the fill (the flight draws
 * it when the loader returns, so that L1 and L2 agree); jitter is 0, so it lies in `[from, to]`.
 * The scheduler drains microtasks between tasks, so the two are equal in practice.
 */
interface ModelRow {
  from: number
  to: number
  flight: ModelFlight
}

interface FetchRecord {
  n: number
  step: FetchStep
  key: string
  /** Decided by the model at the fetch; `undefined` only while the fetch call runs, if the row's expiry is ambiguous. */
  expect: 'hit' | 'join' | 'start' | undefined
  /** The row a hit reads, or the flight a miss waits on. */
  row?: ModelRow
  flight?: ModelFlight
  result: ReturnType<typeof outcome<Token | undefined>>
}

interface Options {
  /** Check, without the model, that no id is loaded twice at once (valid while the gate stays on). */
  gateStaysOn: boolean
}

async function run(s: fc.Scheduler, scenario: Scenario, options: Options) {
  const clock = manualClock(0)
  const { ttl, negativeTtl } = scenario
  const tables: Table<Token | undefined, Id>[] = []
  const gate: boolean[] = []
  const fetches = new Map<number, FetchRecord>()
  const calls: LoadCall[] = []
  const flights: ModelFlight[] = []
  const openFlights = new Map<string, ModelFlight[]>()
  const rows = new Map<string, ModelRow>()
  const undecidedCalls = new Map<number, LoadCall>()
  const problems: string[] = []
  let released = 0

  const openOf = (key: string) => {
    let list = openFlights.get(key)
    if (list === undefined) openFlights.set(key, (list = []))
    return list
  }

  // The origin: the scheduler decides when each load settles.
  const load = s.scheduleFunction(async function load(table: string, id: Id, byFetch: number, result: Outcome) {
    return `${table}/${String(id)} by fetch#${byFetch}: ${result}`
  })

  function loaderOf(step: FetchStep, n: number) {
    return (idArg: Id, context: LoaderContext): Promise<Token | undefined> => {
      const key = keyOf(step.table, step.id)
      if (options.gateStaysOn) {
        const pending = calls.find((c) => c.key === key && !c.released)
        if (pending !== undefined) {
          problems.push(`${key} was loaded for fetch#${n} while the load for fetch#${pending.byFetch} was still pending at the origin`)
        }
      }
      const answer =
        step.outcome === 'value' ? Object.freeze({ table: TABLE_NAMES[step.table], id: step.id, byFetch: n }) : step.outcome === 'error' ? new Error(`load ${key} for fetch#${n} failed`) : undefined
      const call: LoadCall = { key, table: step.table, byFetch: n, idArg, context, outcome: step.outcome, answer, released: false, releasedAt: -1, releasedClock: -1 }
      calls.push(call)
      const record = fetches.get(n)!
      if (record.expect === undefined) undecidedCalls.set(n, call)
      else attach(record, call)
      return load(TABLE_NAMES[step.table], step.id, n, step.outcome).then(() => {
        call.released = true
        call.releasedAt = released++
        call.releasedClock = clock.now()
        if (step.outcome === 'error') throw answer
        return answer as Token | undefined
      })
    }
  }

  /** A loader call belongs to the flight its fetch started; any other call is a broken law. */
  function attach(record: FetchRecord, call: LoadCall) {
    if (record.expect !== 'start') problems.push(`the loader of fetch#${record.n} (${record.key}) ran, but the model expected that fetch to be a ${record.expect}`)
    else if (record.flight!.call !== undefined) problems.push(`the loader of fetch#${record.n} (${record.key}) ran twice`)
    else record.flight!.call = call
  }

  /** The owner ended a flight of `key` (it emits `fill`/`error` in the turn it answers the waiters). */
  function flightEnded(table: number, id: Id | undefined, failed: boolean, error?: unknown) {
    if (id === undefined) {
      problems.push(`table ${TABLE_NAMES[table]} reported an internal fault: ${String(error)}`)
      return
    }
    const key = keyOf(table, id)
    const open = openOf(key)
    // An error is matched by identity; a fill by the order its load was released (results travel
    // back to the owner along paths of equal length, so they arrive in release order).
    const flight = failed
      ? open.find((f) => f.call !== undefined && f.call.answer === error)
      : open.filter((f) => f.call?.released && f.call.outcome !== 'error').sort((a, b) => a.call!.releasedAt - b.call!.releasedAt)[0]
    if (flight === undefined) {
      problems.push(`the table reported a ${failed ? 'failed' : 'filled'} flight of ${key}, but no flight of the model could have ended`)
      return
    }
    open.splice(open.indexOf(flight), 1)
    flight.open = false
    if (!failed) {
      const life = flight.call!.answer === undefined ? negativeTtl : ttl
      rows.set(key, { from: flight.call!.releasedClock + life, to: clock.now() + life, flight })
    }
  }

  for (let t = 0; t < scenario.tables; t++) {
    const table = createTable<Token | undefined, Id>({
      name: TABLE_NAMES[t],
      ttl,
      negativeTtl,
      jitter: 0,
      sweepInterval: 5,
      loadTimeout: FOREVER,
      clock,
    })
    table.events.on('fill', (e) => flightEnded(t, e.id, false))
    table.events.on('error', (e) => flightEnded(t, e.id, true, e.error))
    tables.push(table)
    gate.push(true)
  }

  /** What the model predicts for a fetch: a hit on a live row, a join, or a new flight. */
  function classify(record: FetchRecord, live: boolean) {
    const { key, step, n } = record
    if (live) {
      record.expect = 'hit'
      record.row = rows.get(key)!
    } else {
      const joinable = gate[step.table] ? openOf(key).find((f) => f.joinable) : undefined
      if (joinable !== undefined) {
        record.expect = 'join'
        record.flight = joinable
      } else {
        const flight: ModelFlight = { key, starter: n, joinable: gate[step.table]!, open: true, call: undefined }
        flights.push(flight)
        openOf(key).push(flight)
        record.expect = 'start'
        record.flight = flight
      }
    }
  }

  function issueFetch(step: FetchStep, n: number) {
    const key = keyOf(step.table, step.id)
    const record = { n, step, key, expect: undefined } as FetchRecord
    fetches.set(n, record)
    const row = rows.get(key)
    const now = clock.now()
    const live = row === undefined ? false : now < row.from ? true : now >= row.to ? false : undefined
    if (live !== undefined) classify(record, live)
    const table = tables[step.table]!
    const hitsBefore = table.stats().hits
    const loader = loaderOf(step, n)
    record.result = outcome(step.viaOptions ? table.fetch(step.id, loader, {}) : table.fetch(step.id, loader))
    if (live === undefined) {
      // The row expires between its load's return and its fill: let the hit count say which it was.
      classify(record, table.stats().hits > hitsBefore)
      const call = undecidedCalls.get(n)
      if (call !== undefined) attach(record, call)
    }
  }

  function perform(step: Step, n: number) {
    switch (step.kind) {
      case 'fetch':
        return issueFetch(step, n)
      case 'advance':
        return clock.advance(step.ms)
      case 'gate':
        gate[step.table] = step.on
        return tables[step.table]!.setCoalescing(step.on)
    }
  }

  let n = 0
  for (const caller of scenario.callers) {
    s.scheduleSequence(
      caller.map((step) => {
        const at = n++
        return { label: label(step, at), builder: async () => perform(step, at) }
      }),
    )
  }

  await s.waitIdle()
  await settle()

  return { s, scenario, clock, tables, fetches: [...fetches.values()].sort((a, b) => a.n - b.n), calls, flights, problems }
}

type World = Awaited<ReturnType<typeof run>>

// ---- the laws ----

function fail(message: string): never {
  throw new Error(message)
}

/** The coalescing law, the model of generations and the counter laws, at quiescence. */
function checkLaws(world: World): void {
  const { s, fetches, calls, flights, problems, tables } = world
  expect(s.count(), 'scheduled tasks left after waitIdle').toBe(0)
  expect(problems).toEqual([])

  for (const record of fetches) {
    const where = `fetch#${record.n} of ${record.key} (a ${record.expect})`
    const { result } = record
    if (result.state === 'pending') fail(`${where} never settled`)
    const own = calls.filter((c) => c.byFetch === record.n)
    if (own.length !== (record.expect === 'start' ? 1 : 0)) fail(`${where}: its own loader ran ${own.length} times`)
    const flight = record.expect === 'hit' ? record.row!.flight : record.flight!
    const call = flight.call ?? fail(`${where}: the flight it waited on (started by fetch#${flight.starter}) never called its loader`)
    // Never shared across ids or tables: the load that answered this fetch was a load of its key.
    if (call.key !== record.key || call.table !== record.step.table || !Object.is(call.idArg, record.step.id)) {
      fail(`${where} was answered by the load of ${call.key} (loader got id ${JSON.stringify(call.idArg)})`)
    }
    // The flight's one outcome, by identity.
    if (call.outcome === 'error') {
      if (result.state !== 'rejected' || result.error !== call.answer)
        fail(`${where}: expected the very error of fetch#${call.byFetch}'s load, got ${result.state} ${String(result.error ?? result.value)}`)
    } else if (result.state !== 'fulfilled' || result.value !== call.answer) {
      fail(`${where}: expected the very answer of fetch#${call.byFetch}'s load, got ${result.state} ${JSON.stringify(result.value)} ${String(result.error ?? '')}`)
    }
  }

  // One loader call per flight generation, for every id of every table; every generation ended.
  const keys = new Set([...calls.map((c) => c.key), ...flights.map((f) => f.key)])
  for (const key of keys) {
    const loads = calls.filter((c) => c.key === key).length
    const generations = flights.filter((f) => f.key === key).length
    if (loads !== generations) fail(`${key}: ${loads} loader calls for ${generations} flight generations`)
  }
  for (const flight of flights) if (flight.open) fail(`the flight of ${flight.key} started by fetch#${flight.starter} never ended`)
  for (const call of calls) if (call.context.signal.aborted) fail(`the load of ${call.key} for fetch#${call.byFetch} was aborted`)

  tables.forEach((table, t) => {
    const stats: Stats = table.stats()
    const mine = fetches.filter((r) => r.step.table === t)
    const count = (expect: FetchRecord['expect']) => mine.filter((r) => r.expect === expect).length
    const myFlights = flights.filter((f) => f.call?.table === t)
    const failed = myFlights.filter((f) => f.call!.outcome === 'error').length

    // The README's counter laws (no L2, no timeouts, no cancellation, no capacity pressure here).
    expect(stats.hits + stats.misses, `${TABLE_NAMES[t]}: hits + misses = fetches`).toBe(mine.length)
    expect(stats.misses, `${TABLE_NAMES[t]}: misses = flights + coalesced`).toBe(stats.flights + stats.coalesced)
    expect(stats.inflight, `${TABLE_NAMES[t]}: inflight at quiescence`).toBe(0)
    expect(stats.loads, `${TABLE_NAMES[t]}: loads ≤ flights`).toBeLessThanOrEqual(stats.flights)
    expect(stats.loads, `${TABLE_NAMES[t]}: with no L2, one load per flight`).toBe(stats.flights)
    expect(stats.fills + stats.load_errors, `${TABLE_NAMES[t]}: every flight ends in a fill or an error`).toBe(stats.flights)
    expect(stats.hit_rate).toBe(mine.length === 0 ? 0 : stats.hits / mine.length)

    // ...and the exact numbers the model predicts.
    expect(stats, `${TABLE_NAMES[t]}: counters against the model`).toMatchObject({
      hits: count('hit'),
      negative_hits: mine.filter((r) => r.expect === 'hit' && r.row!.flight.call!.answer === undefined).length,
      misses: count('join') + count('start'),
      coalesced: count('join'),
      flights: count('start'),
      loads: calls.filter((c) => c.table === t).length,
      fills: myFlights.length - failed,
      load_errors: failed,
      l2_hits: 0,
      abandoned: 0,
      timeouts: 0,
      cancelled: 0,
      full_skips: 0,
      inflight: 0,
    })
  })
}

/** Rows that never expire: an id is loaded again only after a failed load, never after a good one. */
function checkOnlyFailuresReload(world: World): void {
  const byKey = new Map<string, LoadCall[]>()
  for (const call of world.calls) byKey.set(call.key, [...(byKey.get(call.key) ?? []), call])
  for (const [key, loads] of byKey) {
    const early = loads.slice(0, -1).find((c) => c.outcome !== 'error')
    if (early !== undefined) fail(`${key} was loaded again after the ${early.outcome} load for fetch#${early.byFetch}`)
  }
}

/** With value/error loads only: each id's distinct answers (by identity) are exactly its loads' answers. */
function checkDistinctAnswersAreLoads(world: World): void {
  for (const call of world.calls) {
    const readers = world.fetches.filter((r) => (r.result.state === 'fulfilled' ? r.result.value : r.result.error) === call.answer)
    if (readers.length === 0) fail(`nobody read the answer of the load of ${call.key} for fetch#${call.byFetch}`)
    for (const r of readers) if (r.key !== call.key) fail(`fetch#${r.n} of ${r.key} read the answer of a load of ${call.key}`)
  }
  for (const r of world.fetches) {
    const answer = r.result.state === 'fulfilled' ? r.result.value : r.result.error
    if (!world.calls.some((c) => c.answer === answer)) fail(`fetch#${r.n} of ${r.key} read an answer no load produced`)
  }
}

async function closeAll(world: World): Promise<void> {
  await Promise.all(world.tables.map((table) => table.close()))
}

// ---- arbitraries ----

const outcomes = (...allowed: Outcome[]) => fc.constantFrom(...allowed)

const fetchStep = (tables: number, ids: readonly Id[], outcome: fc.Arbitrary<Outcome>): fc.Arbitrary<FetchStep> =>
  fc.record({
    kind: fc.constant('fetch' as const),
    table: fc.integer({ min: 0, max: tables - 1 }),
    id: fc.constantFrom(...ids),
    outcome,
    viaOptions: fc.boolean(),
  })

const advanceStep: fc.Arbitrary<AdvanceStep> = fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 1, max: 12 }) })

const gateStep = (tables: number): fc.Arbitrary<GateStep> => fc.record({ kind: fc.constant('gate' as const), table: fc.integer({ min: 0, max: tables - 1 }), on: fc.boolean() })

const RUNS = { numRuns: 100 }

// ---- the properties ----

describe('the coalescing law under every interleaving (fc.scheduler)', () => {
  it('2 callers, one id: one load per generation, both read the one answer', async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), outcomes('value', 'error'), outcomes('value', 'error'), async (s, first, second) => {
        const scenario: Scenario = {
          tables: 1,
          ttl: FOREVER,
          negativeTtl: FOREVER,
          callers: [[{ kind: 'fetch', table: 0, id: 'k', outcome: first, viaOptions: false }], [{ kind: 'fetch', table: 0, id: 'k', outcome: second, viaOptions: false }]],
        }
        const world = await run(s, scenario, { gateStaysOn: true })
        // The trivial oracle: one load, unless the first load failed before the second caller came.
        const { calls } = world
        expect(calls.length === 1 || (calls.length === 2 && calls[0]!.outcome === 'error'), `loads: ${calls.map((c) => c.outcome)}`).toBe(true)
        checkDistinctAnswersAreLoads(world)
        checkLaws(world)
        await closeAll(world)
      }),
      RUNS,
    )
  })

  it('N callers, one id: loads happen only after failures, every waiter reads its generation’s answer', async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.array(fetchStep(1, ['k'], outcomes('value', 'error')), { minLength: 2, maxLength: 12 }), async (s, steps) => {
        const scenario: Scenario = { tables: 1, ttl: FOREVER, negativeTtl: FOREVER, callers: steps.map((step) => [step]) }
        const world = await run(s, scenario, { gateStaysOn: true })
        checkOnlyFailuresReload(world)
        checkDistinctAnswersAreLoads(world)
        checkLaws(world)
        await closeAll(world)
      }),
      RUNS,
    )
  })

  it('N callers over a few ids and two tables: no flight is shared across ids or tables', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.array(fc.array(fetchStep(2, ID_POOL, outcomes('value', 'absent', 'error')), { minLength: 1, maxLength: 4 }), { minLength: 2, maxLength: 8 }),
        async (s, callers) => {
          const world = await run(s, { tables: 2, ttl: FOREVER, negativeTtl: FOREVER, callers }, { gateStaysOn: true })
          checkOnlyFailuresReload(world)
          checkLaws(world)
          await closeAll(world)
        },
      ),
      RUNS,
    )
  })

  it('rows that expire under a manual clock: hits, refills and joins interleave, the law holds', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.array(
          fc.array(fc.oneof({ arbitrary: fetchStep(2, ID_POOL, outcomes('value', 'absent', 'error')), weight: 4 }, { arbitrary: advanceStep, weight: 1 }), {
            minLength: 1,
            maxLength: 5,
          }),
          { minLength: 2, maxLength: 8 },
        ),
        fc.integer({ min: 1, max: 15 }),
        fc.integer({ min: 1, max: 15 }),
        async (s, callers, ttl, negativeTtl) => {
          const world = await run(s, { tables: 2, ttl, negativeTtl, callers }, { gateStaysOn: true })
          checkLaws(world)
          await closeAll(world)
        },
      ),
      RUNS,
    )
  })

  it('the gate toggled mid-run: misses made while off start their own flights, misses = flights + coalesced still', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.array(
          fc.array(fc.oneof({ arbitrary: fetchStep(1, ['k', 1], outcomes('value', 'absent', 'error')), weight: 5 }, { arbitrary: gateStep(1), weight: 3 }, { arbitrary: advanceStep, weight: 1 }), {
            minLength: 1,
            maxLength: 5,
          }),
          { minLength: 2, maxLength: 8 },
        ),
        async (s, callers) => {
          const world = await run(s, { tables: 1, ttl: 10, negativeTtl: 4, callers }, { gateStaysOn: false })
          checkLaws(world)
          await closeAll(world)
        },
      ),
      // Toggles only matter when they land while a flight of the same id is in progress: more runs.
      { numRuns: 300 },
    )
  })
})
