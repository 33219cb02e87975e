import type { Id } from '../core/id.js'
import type { BatchLoaderContext, LoaderContext } from '../core/loader.js'

/** A loader as the owner calls it: whatever `V`, at run time it may answer `undefined` (a JavaScript caller, a cast). */
export type RunLoader<V> = (id: Id, context: LoaderContext) => V | undefined | PromiseLike<V | undefined>

/** A batch answer as the owner reads it: `undefined` may be in it whatever `V` (see {@link RunLoader}). */
export type RunBatchAnswer<V> = ReadonlyArray<V | undefined | Error> | ReadonlyMap<Id, V | undefined | Error>

/** A batch loader as the owner calls it (see {@link RunLoader}). */
export type RunBatchLoader<V> = (ids: Id[], context: BatchLoaderContext<Id>) => RunBatchAnswer<V> | PromiseLike<RunBatchAnswer<V>>

/**
 * A batch loader as a flight's origin: the flights started in one tick with the same batch loader
 * (and in the same namespace) go to it as one call, split at `maxBatchSize` (see `batch-window.ts`). Made by the table; read by
 * the owner.
 */
export class Batch<V> {
  constructor(
    readonly load: RunBatchLoader<V>,
    /** Most ids in one call. */
    readonly maxBatchSize: number,
    /** The batch loader the reads gave (the table's, or a `fetchMany`'s): `load` itself, or the one a namespace's `load` asks with its callers' ids. */
    readonly loader: RunBatchLoader<V> = load,
    /** The key prefix of the namespace whose keys `load` takes (see `tags/scope.ts`); empty for the base table. */
    readonly scope: string = '',
  ) {}
}

/** Where a flight's answer comes from: a loader of one id, or a batch loader. */
export type Origin<V> = RunLoader<V> | Batch<V>
