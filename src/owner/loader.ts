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
  /**
   * Gives this answer's row its tags (at most 64 non-empty strings, each as long as an id may be):
   * `table.invalidateTags` of any of them makes the row stale, in every process. A bad list throws
   * a `TypeError`/`RangeError` here, inside the loader.
   */
  setTags(tags: string[]): void
}

/**
 * Loads one id (of the table's id type `K`) from the origin. It answers a `V`; when `V` admits
 * `undefined` (a table made with `createTable<User | undefined>()`), `undefined` means "absent" and
 * is cached as a negative row; `null` is a value.
 */
export type Loader<V, K extends Id = string> = (id: K, context: LoaderContext) => V | PromiseLike<V>

/** What a batch loader receives beside the ids. */
export interface BatchLoaderContext<K extends Id = string> {
  /** Aborts when every waiter of every id in the batch has left (each id's flight released). */
  readonly signal: AbortSignal
  /**
   * Reports the version of what the batch loader read for `id`, one of this call's ids, as a
   * loader's `setVersion` does: that id's row is stored with it; an id without one takes the highest
   * version known when its load started. A bad id or version throws a `TypeError` here, inside the
   * batch loader.
   */
  setVersion(id: K, version: number): void
  /**
   * Sets the lifetime in ms (in [0, a year]) of the answer for `id`, one of this call's ids,
   * replacing the table's `ttl` (or `negativeTtl`) for it, as a loader's `setTtl` does. A bad id or
   * value throws a `TypeError`/`RangeError` here, inside the batch loader.
   */
  setTtl(id: K, ms: number): void
  /** Gives the answer for `id`, one of this call's ids, its tags, as a loader's `setTags` does. */
  setTags(id: K, tags: string[]): void
}

/**
 * What a batch loader answers for its ids: an array of the same length and order (a hole in it, as
 * `new Array(ids.length)` leaves for an id not filled in, answers `undefined`, absent), or a `Map`
 * from id to answer (an id missing from it answers `undefined`, absent; an id in it that was not
 * asked for is dropped, never cached). An `Error` instance in either fails that id alone.
 */
export type BatchAnswer<V, K extends Id = string> = ReadonlyArray<V | undefined | Error> | ReadonlyMap<K, V | undefined | Error>

/** Loads many ids of type `K` in one origin call (SQL `WHERE id IN`, a bulk endpoint): see {@link BatchAnswer}. */
export type BatchLoader<V, K extends Id = string> = (ids: K[], context: BatchLoaderContext<K>) => BatchAnswer<V, K> | PromiseLike<BatchAnswer<V, K>>

/**
 * A batch loader as a flight's origin: the flights started in one tick with the same batch loader
 * go to it as one call, split at `maxBatchSize` (see `batch-window.ts`). Made by the table; read by
 * the owner.
 */
export class Batch<V> {
  constructor(
    readonly load: BatchLoader<V, Id>,
    /** Most ids in one call. */
    readonly maxBatchSize: number,
  ) {}
}

/** Where a flight's answer comes from: a loader of one id, or a batch loader. */
export type Origin<V> = Loader<V, Id> | Batch<V>
