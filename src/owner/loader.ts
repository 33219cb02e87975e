import type { Id } from '../core/id.js'

/** What a loader receives beside the id. */
export interface LoaderContext {
  /** Aborts when the flight is released: `loadTimeout` passed, or every waiter left by cancellation. */
  readonly signal: AbortSignal
  /**
   * Reports the version of what the loader read (a row version, an `updated_at` in ms...). The row
   * is stored with it; without it the row takes the highest version known when the load started.
   */
  setVersion(version: number): void
  /**
   * Sets this answer's lifetime in ms (in [0, a year]), replacing the table's `ttl` (or `negativeTtl`)
   * for it; jitter applies as usual, and 0 answers the waiters and stores nothing. A bad value throws
   * a `TypeError`/`RangeError` here, inside the loader.
   */
  setTtl(ms: number): void
}

/**
 * Loads one id (of the table's id type `K`) from the origin. It answers a `V`; when `V` admits
 * `undefined` (a table made with `createTable<User | undefined>()`), `undefined` means "absent" and
 * is cached as a negative row; `null` is a value.
 */
export type Loader<V, K extends Id = string> = (id: K, context: LoaderContext) => V | PromiseLike<V>
