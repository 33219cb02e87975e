import type { TimerHandle } from '../clock.js'
import type { Id } from '../id.js'
import type { Waiter } from './waiter.js'

/** What a loader receives beside the id. */
export interface LoaderContext {
  /** Aborts when the flight is released: `loadTimeout` passed, or every waiter left by cancellation. */
  readonly signal: AbortSignal
}

/** Loads one id from the origin. `undefined` means "absent" (cached as a negative row); `null` is a value. */
export type Loader<V> = (id: Id, context: LoaderContext) => V | undefined | PromiseLike<V | undefined>

/** How a flight ended, as data: a flight never rejects into the owner. */
export type FlightResult<V> =
  | { ok: true; value: V | undefined; source: 'loader' }
  | { ok: false; error: unknown }

/**
 * One in-flight load of one id. Created, joined, settled and released only by the owner; the
 * running load writes nothing here but the `loads` count, and reports its result as a message.
 */
export class Flight<V> {
  /** Callers waiting on this flight, in arrival order; answered ones stay, marked settled. */
  readonly waiters: Waiter<V>[] = []
  /** How many of `waiters` are still unanswered. */
  waiting = 0
  /** `running` until the owner settles it (done, timed out or abandoned); later results are discarded. */
  running = true
  /** The `loadTimeout` timer. */
  timer: TimerHandle | undefined = undefined
  private controller: AbortController | undefined = undefined

  constructor(
    /** The id it loads. */
    readonly id: Id,
    /** True when the flight is joinable through the flights map (the coalescing gate was on). */
    readonly registered: boolean,
  ) {}

  /** The loader's signal, created on first use so loaders that ignore it cost no AbortController. */
  get signal(): AbortSignal {
    this.controller ??= new AbortController()
    return this.controller.signal
  }

  /** Aborts the loader's signal (if the loader ever read it). */
  abort(reason: unknown): void {
    this.controller?.abort(reason)
  }

  /** Adds a waiter. */
  join(waiter: Waiter<V>): void {
    waiter.flight = this
    this.waiters.push(waiter)
    this.waiting++
  }
}

/** The loader's view of a flight: only its signal. */
class FlightContext implements LoaderContext {
  constructor(private readonly flight: Flight<unknown>) {}
  get signal(): AbortSignal {
    return this.flight.signal
  }
}

/**
 * Runs one load to its result. Never rejects: a loader that throws synchronously, rejects, or
 * returns a non-promise all become a {@link FlightResult}. `onLoad` is called just before the loader.
 */
export async function runLoad<V>(flight: Flight<V>, loader: Loader<V>, onLoad: () => void): Promise<FlightResult<V>> {
  try {
    onLoad()
    const value = await loader(flight.id, new FlightContext(flight as Flight<unknown>))
    return { ok: true, value, source: 'loader' }
  } catch (error) {
    return { ok: false, error }
  }
}
