/**
 * The workload: a fixed number of workers, each a client running one operation at a time on a
 * table picked at random, until the deadline. An operation is a fetch (plain, with a deadline, or
 * cancelled at some point by its signal), a herd (many callers of one id in one synchronous burst),
 * a put, an invalidate, or now and then a bad input. Reads go to Zipf-ranked ids and, at a fixed
 * share, to ids that do not exist. Every choice comes from the worker's own seeded PRNG; which
 * calls overlap is decided by the workers and the tables, never by sleeps.
 */
import { type ChangeResult, FetchTimeoutError, type FetchOptions, type Id, LeaseHolderFailedError, LoadTimeoutError } from '../src/index.js'
import { seeded } from '../examples/support/prng.js'
import type { BadInputs } from './bad-inputs.js'
import type { PromiseLedger } from './ledger.js'
import { LOADER_KINDS, type LoaderKind, type LoaderPlan, OriginError, makeLoader } from './loaders.js'
import type { Origin, Row } from './origin.js'
import { type Problems, show } from './problems.js'
import { SHAPE, type SoakTable } from './world.js'

/** The operations a worker runs, with their weights in the mix. */
export const OP_MIX = { fetch: 44, 'fetch with timeout': 12, 'fetch cancelled': 10, herd: 4, put: 12, invalidate: 8, 'bad input': 1 } as const
/** One kind of operation. */
export type OpKind = keyof typeof OP_MIX

/** How often each loader behaviour is handed to a fetch (only a flight's first caller's loader runs). */
export const LOADER_MIX: Record<LoaderKind, number> = { sync: 28, async: 36, reject: 8, throw: 5, absent: 8, hang: 3 }

/** Where a cancelling caller aborts: before calling (refused at once), in the turn of the call, the next turn, a little later, or by `AbortSignal.timeout`. */
export const CANCEL_POINTS = ['before the call', 'same turn', 'next turn', 'later', 'AbortSignal.timeout'] as const
/** One cancel point. */
export type CancelPoint = (typeof CANCEL_POINTS)[number]

/** Workers: clients running one operation at a time, side by side. */
export const WORKERS = 48
/** Share of reads and changes aimed at ids that do not exist. */
const GHOST_SHARE = 0.1
/** Largest herd. */
const HERD_MAX = 40
/** Longest caller deadline or cancel delay, in ms: a little past `loadTimeout`, so some callers meet `LoadTimeoutError` first. */
const WAIT_MAX = SHAPE.loadTimeout + 20
/** Longest delay of an async loader, in ms. */
const LOADER_DELAY_MAX = 8

/** The rules the workload checks as calls settle (their breaks go to `Problems` under these names). */
export const RULES = {
  neverThrows: 'fetch, put and invalidate never throw synchronously',
  answerForId: 'every answer is a row of the id asked for, or undefined',
  herd: 'every plain caller of a herd got the one identical answer',
  namedRejections: 'every rejection is one the contract names',
  changes: 'every change result is well-formed and reached the bus',
} as const

/** What the workload ran, by kind. */
export class WorkloadCounts {
  /** Operations, by kind (a herd is one). */
  readonly ops = Object.fromEntries(Object.keys(OP_MIX).map((k) => [k, 0])) as Record<OpKind, number>
  /** Loaders handed to fetches, by behaviour (only a flight's first caller's loader runs). */
  readonly loaders = Object.fromEntries(LOADER_KINDS.map((k) => [k, 0])) as Record<LoaderKind, number>
  /** Cancelling callers, by where they aborted. */
  readonly cancelPoints = Object.fromEntries(CANCEL_POINTS.map((k) => [k, 0])) as Record<CancelPoint, number>
  /** Every `fetch` call the workload made (herd members included). */
  fetchCalls = 0
  /** Callers in herds. */
  herdCallers = 0

  /** Operations of every kind. */
  get total(): number {
    return Object.values(this.ops).reduce((a, b) => a + b, 0)
  }
}

/** What the workload works with. */
export interface WorkloadDeps {
  tables: readonly SoakTable[]
  origin: Origin
  ledger: PromiseLedger
  problems: Problems
  badInputs: BadInputs
  counts: WorkloadCounts
  seed: number
}

type Caller = { kind: 'plain' } | { kind: 'timeout'; timeout: number } | { kind: 'cancel'; point: CancelPoint; delay: number; timeout: number | undefined }
type Outcome = { ok: true; value: Row | undefined } | { ok: false; error: unknown }

/** Draws keys of `weights` in proportion to their weights. */
function weighted<K extends string>(weights: Record<K, number>, random: () => number): () => K {
  const keys = Object.keys(weights) as K[]
  const total = keys.reduce((sum, k) => sum + weights[k], 0)
  return () => {
    let u = random() * total
    for (const k of keys) if ((u -= weights[k]) < 0) return k
    return keys[keys.length - 1]!
  }
}

/** The reason a caller's own abort carries: the caller must get exactly this object back. */
class CallerCancelled extends Error {
  override name = 'CallerCancelled'
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve))
/** Two callers got the same answer: the identical value, or the identical error. */
const same = (a: Outcome, b: Outcome) => (a.ok ? b.ok && a.value === b.value : !b.ok && a.error === b.error)

/** Runs {@link WORKERS} workers until `deadline` (a `performance.now()` time); resolves once each has finished its last operation. */
export async function runWorkload(deps: WorkloadDeps, deadline: number): Promise<void> {
  const { tables, origin, ledger, problems, badInputs, counts } = deps

  /** Calls `op`; a synchronous throw (the API rejects instead) is recorded, and becomes the rejection. */
  function attempt<T>(t: SoakTable, what: string, id: Id, op: () => Promise<T>): Promise<T> {
    try {
      return op()
    } catch (error) {
      problems.add(RULES.neverThrows, `${t.label}: ${what}(${show(id)}) threw ${show(error)}`)
      return Promise.reject(error)
    }
  }

  function checkAnswer(id: Id, value: Row | undefined): void {
    if (value !== undefined && (value === null || typeof value !== 'object' || value.id !== id)) {
      problems.add(RULES.answerForId, `fetch(${show(id)}) answered ${show(value)}`)
    }
  }

  function checkRejection(t: SoakTable, id: Id, error: unknown, signal: AbortSignal | undefined): void {
    if (signal !== undefined && error === signal.reason) t.tally.cancelled++
    else if (error instanceof FetchTimeoutError && error.id === id) t.tally.timedOut++
    // A loader's failure reaches every waiter of its flight, and with a lease the waiters in the other tables too.
    else if (!(error instanceof OriginError || (error instanceof LoadTimeoutError && error.id === id) || (error instanceof LeaseHolderFailedError && error.id === id))) {
      problems.add(RULES.namedRejections, `${t.label}: fetch(${show(id)}) rejected with ${show(error)}`)
    }
  }

  /** One fetch as `caller`; resolves with how it settled (never rejects). */
  function call(t: SoakTable, id: Id, caller: Caller, plan: LoaderPlan): Promise<Outcome> {
    counts.fetchCalls++
    counts.loaders[plan.kind]++
    const loader = makeLoader(plan, { label: t.label, origin, tally: t.tally, ledger })
    let options: FetchOptions | undefined
    let signal: AbortSignal | undefined
    let abort = () => {}
    if (caller.kind === 'timeout') options = { timeout: caller.timeout }
    else if (caller.kind === 'cancel') {
      counts.cancelPoints[caller.point]++
      if (caller.point === 'AbortSignal.timeout') signal = AbortSignal.timeout(caller.delay)
      else {
        const controller = new AbortController()
        signal = controller.signal
        abort = () => controller.abort(new CallerCancelled(`caller of ${show(id)} left`))
        if (caller.point === 'before the call') abort()
      }
      options = caller.timeout === undefined ? { signal } : { signal, timeout: caller.timeout }
    }
    if (!signal?.aborted) t.tally.lookups++ // an already-aborted signal is refused before the lookup
    const promise = ledger.track(
      'fetch',
      attempt(t, 'fetch', id, () => t.table.fetch(id, loader, options)),
    )
    if (caller.kind === 'cancel') {
      if (caller.point === 'same turn') abort()
      else if (caller.point === 'next turn') setImmediate(abort)
      else if (caller.point === 'later') setTimeout(abort, caller.delay)
    }
    return promise.then(
      (value): Outcome => {
        checkAnswer(id, value)
        return { ok: true, value }
      },
      (error: unknown): Outcome => {
        checkRejection(t, id, error, signal)
        return { ok: false, error }
      },
    )
  }

  function checkChange(t: SoakTable, op: string, id: Id, version: number | undefined, result: ChangeResult): void {
    const { version: got, applied, l2, broadcast } = result
    const l2Ok = t.chaos === undefined ? l2 === 'none' : l2 === 'written' || l2 === 'refused' || l2 === 'failed'
    const versionOk = Number.isSafeInteger(got) && got >= 0 && (version === undefined || got === version)
    if (!versionOk || typeof applied !== 'boolean' || !l2Ok || broadcast !== true) {
      problems.add(RULES.changes, `${t.label}: ${op}(${show(id)}${version === undefined ? '' : `, v${version}`}) resolved ${show(result)}`)
    }
  }

  async function change(t: SoakTable, op: 'put' | 'invalidate', id: Id, random: () => number): Promise<void> {
    // Explicit versions come from the origin, as a database's row version would, for the ids fed with
    // them; the other ids' are assigned by the table (L2's counter, or highest + 1).
    const version = origin.versioned(id) ? origin.bump(id) : undefined
    const options = version === undefined ? undefined : { version }
    const value = random() < 0.1 ? undefined : origin.written(id)
    const pending = attempt(t, op, id, () => (op === 'put' ? t.table.put(id, value, options) : t.table.invalidate(id, options)))
    await ledger.track(op, pending).then(
      (result) => checkChange(t, op, id, version, result),
      (error: unknown) => problems.add(RULES.namedRejections, `${t.label}: ${op}(${show(id)}) rejected with ${show(error)}`),
    )
  }

  async function worker(index: number): Promise<void> {
    const random = seeded((deps.seed + Math.imul(index + 1, 0x9e3779b9)) >>> 0)
    const hot = origin.hotIds(random)
    const pickOp = weighted(OP_MIX, random)
    const pickLoader = weighted(LOADER_MIX, random)
    const id = (): Id => (random() < GHOST_SHARE ? origin.ghost(random) : hot())
    const wait = () => 1 + Math.floor(random() * WAIT_MAX)
    const plan = (): LoaderPlan => {
      const kind = pickLoader()
      return { kind, delay: random() < 0.3 ? 0 : Math.floor(random() * LOADER_DELAY_MAX), reportVersion: random() < 0.3 }
    }
    const cancel = (): Caller => ({
      kind: 'cancel',
      point: CANCEL_POINTS[Math.floor(random() * CANCEL_POINTS.length)]!,
      delay: wait(),
      timeout: random() < 0.3 ? wait() : undefined,
    })
    const herdCaller = (): Caller => {
      const u = random()
      return u < 0.7 ? { kind: 'plain' } : u < 0.85 ? { kind: 'timeout', timeout: wait() } : cancel()
    }

    while (performance.now() < deadline) {
      const t = tables[Math.floor(random() * tables.length)]!
      const op = pickOp()
      counts.ops[op]++
      switch (op) {
        case 'fetch':
          await call(t, id(), { kind: 'plain' }, plan())
          break
        case 'fetch with timeout':
          await call(t, id(), { kind: 'timeout', timeout: wait() }, plan())
          break
        case 'fetch cancelled':
          await call(t, id(), cancel(), plan())
          break
        case 'herd': {
          const target = id()
          const size = 2 + Math.floor(random() * (HERD_MAX - 1))
          const callers = Array.from({ length: size }, herdCaller)
          counts.herdCallers += size
          const outcomes = await Promise.all(callers.map((caller) => call(t, target, caller, plan())))
          const plain = outcomes.filter((_, i) => callers[i]!.kind === 'plain')
          if (plain.some((o) => !same(o, plain[0]!)))
            problems.add(RULES.herd, `${t.label}: a herd of ${size} on ${show(target)} got ${new Set(plain.map((o) => (o.ok ? o.value : o.error))).size} different answers`)
          break
        }
        case 'put':
        case 'invalidate':
          await change(t, op, id(), random)
          break
        case 'bad input':
          await badInputs.tryNext(t)
          break
      }
      await nextTurn()
    }
  }

  await Promise.all(Array.from({ length: WORKERS }, (_, i) => worker(i)))
}
