/**
 * A namespace view's origins: its rows are stored under keys (see `tags/scope.ts`), while its
 * loaders are asked, and answer, with the caller's ids.
 */
import { type Id, unkey } from '../core/id.js'
import type { BatchLoaderContext } from '../core/loader.js'
import { Batch, type RunBatchAnswer, type RunLoader } from '../owner/loader.js'
import type { Scope } from '../tags/scope.js'

/** `loader` asked for `id` (the caller's) whatever key its flight loads. */
export function viewLoader<V>(loader: RunLoader<V>, id: Id): RunLoader<V> {
  return (_key, context) => loader(id, context)
}

/**
 * `batch` asked with the callers' ids of the keys its flights load in `scope`: `setVersion`, `setTtl` and `setTags` take
 * those ids, and a `Map` answer keyed by them is keyed back (an array answers in order as it is).
 * Every view of `scope` may make its own: the batch window groups flights by `batch`'s loader and
 * `scope`, so the reads of one tick in one namespace still make one call.
 */
export function viewBatch<V>(batch: Batch<V>, scope: Scope): Batch<V> {
  return new Batch<V>(
    (keys, context) => {
      const ids = keys.map((key) => unkey(key)!.id)
      const keyOf = new Map<Id, Id>(ids.map((id, i) => [id, keys[i]!]))
      // An id not of this call is passed on as it is, so the error names it.
      const view: BatchLoaderContext<Id> = {
        get signal() {
          return context.signal
        },
        setVersion: (id, version) => context.setVersion(keyOf.get(id) ?? id, version),
        setTtl: (id, ms) => context.setTtl(keyOf.get(id) ?? id, ms),
        setTags: (id, tags) => context.setTags(keyOf.get(id) ?? id, tags),
      }
      // A loader may reorder the ids it is given (sorting them for a query is common): a `Map` answer is keyed back by id, never by position.
      const answer = batch.load(ids, view)
      return isThenable(answer) ? Promise.resolve(answer).then((settled) => keyedBack(settled, keyOf)) : keyedBack(answer, keyOf)
    },
    batch.maxBatchSize,
    batch.loader,
    scope.keyPrefix,
  )
}

/** A `Map` answer by the callers' ids, as one by keys (`keyOf`: each asked id's key; an id not asked is dropped); anything else as it is (the batch runner judges it). */
function keyedBack<V>(answer: RunBatchAnswer<V>, keyOf: ReadonlyMap<Id, Id>): RunBatchAnswer<V> {
  if (!(answer instanceof Map)) return answer
  const byKey = new Map<Id, V | undefined | Error>()
  for (const [id, value] of answer) {
    const key = keyOf.get(id)
    if (key !== undefined) byKey.set(key, value)
  }
  return byKey
}

function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function'
}
