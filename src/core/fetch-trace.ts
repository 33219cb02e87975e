/**
 * One traced fetch (or batch read), while someone subscribes to `echostore:fetch`: the record the
 * owner writes as it places the caller (started a flight, joined one, answered a graced value), from
 * which the fetch's `outcome` is told; and the flight's own record, shared by the callers it serves,
 * whose runner runs in the async context of the fetch that started it (so a tracer sees its loads
 * and L2 calls under that fetch). Nothing here is made without a subscriber.
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import { type FetchChannelContext, type FetchOutcome, begin, fetchChannel, settle } from './channels.js'
import type { Id } from './id.js'

/** A flight started by a traced fetch. Written only by the owner (`callers`, as callers join). */
export class FlightTrace {
  constructor(
    /** The fetch that started the flight. */
    readonly starter: FetchTrace,
    /** Callers placed on the flight so far, its starter's included. */
    public callers: number,
  ) {}
}

/**
 * One traced fetch. The facade sets `outcome` when it answers without the owner (a row, a
 * stale-while-revalidate value); otherwise the owner sets `started`, `stale` and `flight` as it
 * places and answers the caller.
 */
export class FetchTrace {
  /** An outcome known before the owner was asked. Written by the facade. */
  outcome: FetchOutcome | undefined = undefined
  /** The caller started its flight. Written by the owner. */
  started = false
  /** The caller was answered a graced value. Written by the owner. */
  stale = false
  /** The flight the caller started or joined, when that flight is traced. Written by the owner. */
  flight: FlightTrace | undefined = undefined
  /** Runs a function in the caller's async context; taken by {@link arm} when the caller goes to the owner. */
  run: (<R>(fn: () => R) => R) | undefined = undefined
  /** For a batch read: the trace of each id it reads (see {@link part}). */
  parts: FetchTrace[] | undefined = undefined
  /** For one id of a batch read: the batch read's trace. */
  whole: FetchTrace | undefined = undefined

  /** The trace of one more id of this batch read: written by the owner like any, and told together by {@link resolved}. */
  part(): FetchTrace {
    const part = new FetchTrace()
    part.whole = this
    ;(this.parts ??= []).push(part)
    return part
  }

  /** Takes the caller's async context (for the flight it may start) and returns the trace: called by the facade as it hands the caller to the owner. */
  arm(): this {
    this.run = AsyncLocalStorage.snapshot()
    return this
  }

  /**
   * The outcome of a fetch that resolved. For a batch read, the outcome of its ids taken together:
   * `miss` when one started a flight, else `coalesced` when one joined one, else `stale` when one got
   * a graced value, else `negative` when every id hit a negative row, else `hit`.
   */
  resolved(): FetchOutcome {
    if (this.parts !== undefined) return combined(this.parts.map((part) => part.resolved()))
    return this.outcome ?? (this.stale ? 'stale' : this.started ? 'miss' : 'coalesced')
  }

  /** How many of its answers were graced values: a batch read's ids one by one, else 1 or 0. */
  staleAnswers(): number {
    if (this.parts !== undefined) return this.parts.reduce((sum, part) => sum + part.staleAnswers(), 0)
    return this.resolved() === 'stale' ? 1 : 0
  }
}

/** The outcome of a batch read whose ids had `outcomes` (see {@link FetchTrace.resolved}). */
function combined(outcomes: FetchOutcome[]): FetchOutcome {
  for (const outcome of ['miss', 'coalesced', 'stale'] as const) if (outcomes.includes(outcome)) return outcome
  return outcomes.length > 0 && outcomes.every((outcome) => outcome === 'negative') ? 'negative' : 'hit'
}

/** The trace of the fetch whose `echostore:fetch` event is being published now: written only by {@link traceFetch}, around each publication. */
let publishing: FetchTrace | undefined

/** The trace of the fetch whose `start`, `error`, `asyncStart` or `asyncEnd` event is being published right now (read by `echostore/otel` in its handlers); `undefined` at any other time. */
export function tracePublishing(): FetchTrace | undefined {
  return publishing
}

/** Publishes the end of a traced fetch with `trace` as {@link tracePublishing}. */
function settleTraced(context: FetchChannelContext, trace: FetchTrace, failed: boolean, answer: unknown): void {
  // A subscriber may read the table as it hears of this one (a traced fetch of its own): the outer publication is restored after it.
  const outer = publishing
  publishing = trace
  try {
    settle(fetchChannel, context, failed, answer)
  } finally {
    publishing = outer
  }
}

/**
 * Runs one fetch (or batch read, with `ids`) under `echostore:fetch`: `read` gets the trace to hand
 * the owner and must never throw; the context's `outcome` is set before `asyncStart` is published.
 * The one entry point for every traced read of the table facade.
 */
export function traceFetch<T>(table: string, ids: { id: Id } | { ids: readonly Id[] }, read: (trace: FetchTrace) => Promise<T>): Promise<T> {
  const context: FetchChannelContext = { table, ...ids }
  const trace = new FetchTrace()
  // A batch read is told by its ids' outcomes from the start: one of no ids is a hit.
  if ('ids' in ids) trace.parts = []
  const outer = publishing
  publishing = trace // for the start event, published before `read` runs
  return begin(fetchChannel, context, () => {
    publishing = outer
    return read(trace).then(
      (value) => {
        context.outcome = trace.resolved()
        staleIn(context, trace)
        settleTraced(context, trace, false, value)
        return value
      },
      (error: unknown) => {
        context.outcome = 'error'
        // A batch read that failed may still have answered some of its ids a graced value (the fail-safe's, counted in `stale_hits`).
        staleIn(context, trace)
        settleTraced(context, trace, true, error)
        throw error
      },
    )
  })
}

/** Writes into `context` how many graced answers `trace`'s read got, when it got any. */
function staleIn(context: FetchChannelContext, trace: FetchTrace): void {
  const stale = trace.staleAnswers()
  if (stale > 0) context.stale = stale
}

/** A traced caller started `flight`: its trace becomes the flight's (with `count` callers), and the flight's runner runs in its context. */
export function tracedStart(flight: { trace: FlightTrace | undefined }, trace: FetchTrace | undefined, count: number): void {
  if (trace === undefined) return
  trace.started = true
  trace.flight = flight.trace = new FlightTrace(trace, count)
}

/** `count` callers (traced or not) joined `flight`. */
export function tracedJoin(flight: { trace: FlightTrace | undefined }, trace: FetchTrace | undefined, count: number): void {
  if (flight.trace !== undefined) flight.trace.callers += count
  if (trace !== undefined) trace.flight = flight.trace
}

/** The waiters about to be answered a graced value (the fail-safe, a soft timeout; a forced refresh's are not): their traces say so. */
export function tracedStale(waiters: readonly { trace: FetchTrace | undefined; settled: boolean; forced: boolean }[] | undefined): void {
  if (waiters === undefined) return
  for (const waiter of waiters) if (waiter.trace !== undefined && !waiter.settled && !waiter.forced) waiter.trace.stale = true
}

/**
 * The traced flight whose runner runs here, as an async context store: set only by
 * {@link runTraced}, read by `echostore/otel` to make a flight's loads and L2 calls its children.
 * It stays unused (and costs nothing) until a traced fetch starts a flight.
 */
export const flightHere = new AsyncLocalStorage<FlightTrace>()

/** Starts a flight's runner, and returns what it returns: in the async context of the traced fetch that started it, if one did, with the flight as {@link flightHere}. */
export function runTraced<R>(flight: { trace: FlightTrace | undefined }, runner: () => R): R {
  const trace = flight.trace
  const run = trace?.starter.run
  if (trace === undefined || run === undefined) return runner()
  return run(() => flightHere.run(trace, runner))
}
