/**
 * What a loader is, as an application writes one: the {@link Loader} of one id and the
 * {@link BatchLoader} of many, what each receives beside its ids, and what each may answer.
 */
import type { Id } from './id.js'

/** What a loader receives beside the id. */
export interface LoaderContext {
  /** Aborts when the flight is released: `loadTimeout` passed, or every waiter left by cancellation. */
  readonly signal: AbortSignal
  /**
   * Reports the version of what the loader read (a row version, an `updated_at` in ms...), an
   * integer in [0, 2^52]. The row is stored with it; without it the row takes the highest version
   * known when the load started. A bad value throws a `TypeError`/`RangeError` here, inside the loader.
   */
  setVersion(version: number): void
  /**
   * Sets this answer's lifetime in ms (in [0, a year]), replacing the table's `ttl` (or `negativeTtl`)
   * for it; jitter applies as usual, and 0 answers the waiters and stores nothing. A bad value throws
   * a `TypeError`/`RangeError` here, inside the loader.
   */
  setTtl(ms: number): void
  /**
   * Gives this answer's row its tags (at most 64 non-empty strings, each as long as an id may be):
   * `table.invalidateTags` of any of them makes the row stale, in every process. A bad list throws
   * a `TypeError`/`RangeError` here, inside the loader.
   */
  setTags(tags: readonly string[]): void
}

/**
 * What the type checker names when a loader (or a batch loader) may answer `undefined` for a table
 * whose `V` does not admit it: the fix is in its one property's name. Nothing at run time has this
 * type.
 */
export interface LoaderMayAnswerUndefined {
  readonly 'loader may answer undefined: declare the table as createTable<V | undefined>': never
}

/**
 * What a table whose `V` does not admit `undefined` offers a loader's promise besides `V` and
 * `PromiseLike<V>`, so that the type checker explains a promise it refuses against this (it shares
 * the most members with a `Promise`): a promise that may resolve `undefined` is refused by its one
 * property, whose name says the fix, instead of by a mismatch of `PromiseLike`s. Its members carry
 * no `V`, so a `Promise.reject()` or `new Promise(...)` in a loader still infers `V`. Never met at
 * run time.
 */
export type ExplainsUndefined<V> = undefined extends V ? never : { then: unknown; catch: unknown; finally: unknown; [Symbol.toStringTag]: unknown } & LoaderMayAnswerUndefined

/**
 * Loads one id (of the table's id type `K`) from the origin. It answers a `V`; when `V` admits
 * `undefined` (a table made with `createTable<User | undefined>()`), `undefined` means "absent" and
 * is cached as a negative row; `null` is a value. On a table whose `V` does not admit it, a loader
 * that may answer `undefined` does not compile, and the error names the fix (see
 * {@link LoaderMayAnswerUndefined}).
 */
export type Loader<V, K extends Id = string> = (id: K, context: LoaderContext) => V | PromiseLike<V> | ExplainsUndefined<V>

/** What a batch loader receives beside the ids. */
export interface BatchLoaderContext<K extends Id = string> {
  /** Aborts when every id's flight in the batch is released (`loadTimeout` passed, or every waiter of the id left by cancellation). */
  readonly signal: AbortSignal
  /**
   * Reports the version of what the batch loader read for `id`, one of this call's ids, as a
   * loader's `setVersion` does: that id's row is stored with it; an id without one takes the highest
   * version known when its load started. A bad id or version throws a `TypeError`/`RangeError` here,
   * inside the batch loader.
   */
  setVersion(id: K, version: number): void
  /**
   * Sets the lifetime in ms (in [0, a year]) of the answer for `id`, one of this call's ids,
   * replacing the table's `ttl` (or `negativeTtl`) for it, as a loader's `setTtl` does. A bad id or
   * value throws a `TypeError`/`RangeError` here, inside the batch loader.
   */
  setTtl(id: K, ms: number): void
  /** Gives the answer for `id`, one of this call's ids, its tags, as a loader's `setTags` does. A bad id or list throws a `TypeError`/`RangeError` here, inside the batch loader. */
  setTags(id: K, tags: readonly string[]): void
}

/** `undefined` when `V` admits it (the answer "absent"), else nothing. */
export type Absent<V> = undefined extends V ? undefined : never

/**
 * What a batch loader answers for its ids: an array of the same length and order (a hole in it, as
 * `new Array(ids.length)` leaves for an id not filled in, answers `undefined`, absent), or a `Map`
 * from id to answer (an id missing from it answers `undefined`, absent, whatever `V`: the type
 * checker cannot see which ids a `Map` holds; an id in it that was not asked for is dropped, never
 * cached). An `Error` instance in either fails that id alone. `undefined` (absent) is an answer
 * only when `V` admits it, as for a loader.
 */
export type BatchAnswer<V, K extends Id = string> = ReadonlyArray<V | Absent<V> | Error> | ReadonlyMap<K, V | Absent<V> | Error>

/**
 * Loads many ids of type `K` in one origin call (SQL `WHERE id IN`, a bulk endpoint): see
 * {@link BatchAnswer}. As for a loader, one that may answer `undefined` for a table whose `V` does
 * not admit it does not compile, and the error names the fix ({@link LoaderMayAnswerUndefined}).
 */
export type BatchLoader<V, K extends Id = string> = (ids: K[], context: BatchLoaderContext<K>) => BatchAnswer<V, K> | PromiseLike<BatchAnswer<V, K>> | ExplainsUndefined<V>
