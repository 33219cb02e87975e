import type { Id, Loader, LoaderContext } from '../src/index.js'
import type { PromiseLedger } from './ledger.js'
import type { Origin, Row } from './origin.js'
import type { Tally } from './tally.js'

/**
 * How a loader behaves: answers at once (`sync`), after a delay (`async`), rejects, throws
 * synchronously, answers `undefined` for an id that exists (`absent`: a negative row), or hangs
 * until its signal aborts (`hang`: the table's `loadTimeout`, or every waiter leaving, ends it).
 */
export type LoaderKind = 'sync' | 'async' | 'reject' | 'throw' | 'absent' | 'hang'

/** Every loader kind, for counting and coverage. */
export const LOADER_KINDS: readonly LoaderKind[] = ['sync', 'async', 'reject', 'throw', 'absent', 'hang']

/** The error a failing loader rejects or throws with: a failure the contract passes to every waiter. */
export class OriginError extends Error {
  constructor(id: Id, how: 'rejected' | 'threw') {
    super(`the origin ${how} for ${typeof id === 'number' ? id : JSON.stringify(id).slice(0, 40)}`)
    this.name = 'OriginError'
  }
}

/** What a loader needs besides its kind. */
export interface LoaderDeps {
  /** The table it loads for: its promises are recorded as `loader (<label>)`. */
  label: string
  origin: Origin
  /** The table's tally: every call counts as origin work. */
  tally: Tally
  ledger: PromiseLedger
}

/** How one loader call goes, decided by the worker that makes it. */
export interface LoaderPlan {
  kind: LoaderKind
  /** Delay of an `async` or `reject` answer in ms; 0 answers a microtask later. */
  delay: number
  /** An `async` loader reports the origin's version of the id through `setVersion`. */
  reportVersion: boolean
}

function after(ms: number): Promise<void> {
  return ms === 0 ? Promise.resolve() : new Promise((resolve) => setTimeout(resolve, ms))
}

/** Rejects with the signal's reason once it aborts (at once if it already has); never settles otherwise. */
function untilAborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason)
    else signal.addEventListener('abort', () => reject(signal.reason), { once: true })
  })
}

/** A loader behaving as `plan` says; every promise it returns is recorded in the ledger as a `loader (<label>)`. */
export function makeLoader(plan: LoaderPlan, { label, origin, tally, ledger }: LoaderDeps): Loader<Row | undefined, Id> {
  const kind = `loader (${label})`
  return (id: Id, context: LoaderContext) => {
    tally.loaderCalls++
    switch (plan.kind) {
      case 'sync':
        return origin.read(id)
      case 'absent':
        return undefined
      case 'throw':
        throw new OriginError(id, 'threw')
      case 'async':
        if (plan.reportVersion && origin.versioned(id)) context.setVersion(origin.version(id))
        return ledger.track(
          kind,
          after(plan.delay).then(() => origin.read(id)),
        )
      case 'reject':
        return ledger.track(
          kind,
          after(plan.delay).then(() => Promise.reject(new OriginError(id, 'rejected'))),
        )
      case 'hang':
        return ledger.track(kind, untilAborted(context.signal))
    }
  }
}
