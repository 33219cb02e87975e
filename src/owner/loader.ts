import type { Id } from '../id.js'

/** What a loader receives beside the id. */
export interface LoaderContext {
  /** Aborts when the flight is released: `loadTimeout` passed, or every waiter left by cancellation. */
  readonly signal: AbortSignal
  /**
   * Reports the version of what the loader read (a row version, an `updated_at` in ms...). The row
   * is stored with it; without it the row takes the highest version known when the load started.
   */
  setVersion(version: number): void
}

/** Loads one id from the origin. `undefined` means "absent" (cached as a negative row); `null` is a value. */
export type Loader<V> = (id: Id, context: LoaderContext) => V | undefined | PromiseLike<V | undefined>
