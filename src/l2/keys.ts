import { badArgument, badId, describe } from '../core/errors.js'
import type { Id } from '../core/id.js'
import { isKey } from '../core/id.js'

/**
 * How many buckets a table's ids are spread over. Each bucket is one Redis Cluster hash tag (one
 * slot), holding its ids' keys and its own clear generation, so a table's load is spread over the
 * masters (with 3 masters each serves its share ±~10%) and a failed master touches only its buckets.
 */
export const BUCKETS = 1024

/**
 * The bucket of (table, id): FNV-1a of the pair's JSON, modulo {@link BUCKETS}. Stable across
 * processes and versions: every process must agree on it.
 */
export function bucketOf(table: string, id: Id): number {
  const text = JSON.stringify([table, id])
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193)
  }
  return (hash >>> 0) % BUCKETS
}

/** `prefix` + `{` + `JSON.stringify([bucket, table])` + `}`: the hash tag of one bucket of a table. */
function bucketTag(prefix: string, table: string, bucket: number): string {
  return `${prefix}{${JSON.stringify([bucket, table])}}`
}

function checkTable(table: unknown): asserts table is string {
  if (typeof table !== 'string') throw badArgument(TypeError, `an L2 table name must be a string, got ${describe(table)}`)
}

/**
 * The Redis key layout. A data key is `prefix` verbatim, then the bucket's hash tag
 * `{[bucket,"table"]}`, then `JSON.stringify(id)`; the version key of the same (table, id) is that
 * data key followed by `:v`, its lease key by `:lease`. For example `echostore:{[517,"emoji_sets"]}"party"`.
 *
 * - Unambiguous: JSON quotes and escapes the table and the id, so table `a:b` with id `c` never meets
 *   table `a` with id `b:c`, and the number `1` never meets the string `'1'` (`"1"`).
 * - Data keys end in the id's JSON (or `:<generation>` once the bucket was cleared, see
 *   {@link entryKey}), version keys in `:v`, lease keys in `:lease`, generation keys in `}:gen`:
 *   the families never share a key.
 * - The braces make the bucket a Redis Cluster hash tag, so an id's data, version and lease keys and
 *   its bucket's generation live in one slot (the scripts touch them together). The tag starts with
 *   the bucket number, so even a table name holding `}` (which ends the tag early) keeps its
 *   buckets in distinct slots. A prefix holding a brace would take the tag over: `redisL2` refuses one.
 * - `0` and `-0` are one id (as in a `Map`).
 */
export function l2Key(prefix: string, table: string, id: Id): string {
  checkTable(table)
  if (!isKey(id)) throw badId('an L2', id)
  return `${bucketTag(prefix, table, bucketOf(table, id))}${JSON.stringify(id)}`
}

/**
 * The key of (table, id)'s entry in its bucket's `generation` (0 until the bucket is first cleared):
 * {@link l2Key} itself for generation 0, else followed by `:<generation>`. Same slot as the version key.
 */
export function entryKey(prefix: string, table: string, id: Id, generation: number): string {
  return inGeneration(l2Key(prefix, table, id), generation)
}

/** The key of the entry whose {@link l2Key} is `base` in `generation` (see {@link entryKey}). */
export function inGeneration(base: string, generation: number): string {
  return generation === 0 ? base : `${base}:${generation}`
}

/** The key holding the clear generation of one bucket of a table: the bucket's tag + `:gen`. */
export function bucketGenerationKey(prefix: string, table: string, bucket: number): string {
  checkTable(table)
  return `${bucketTag(prefix, table, bucket)}:gen`
}

/** The generation key of the bucket (table, id) falls in (see {@link bucketGenerationKey}). */
export function generationKey(prefix: string, table: string, id: Id): string {
  checkTable(table)
  if (!isKey(id)) throw badId('an L2', id)
  return bucketGenerationKey(prefix, table, bucketOf(table, id))
}

/** The key of the lease of (table, id): its data key followed by `:lease` (see {@link l2Key}); it shares the pair's slot. */
export function leaseKey(prefix: string, table: string, id: Id): string {
  return `${l2Key(prefix, table, id)}:lease`
}

/** The key of the version counter for (table, id): its data key followed by `:v` (see {@link l2Key}). */
export function versionKey(prefix: string, table: string, id: Id): string {
  return `${l2Key(prefix, table, id)}:v`
}

/**
 * Why `prefix` would break the layout under Redis Cluster, or undefined when it is fit: a brace in
 * it would take the hash tag over (every key in one slot) or, empty or lone, split an id's keys
 * over slots.
 */
export function unfitPrefix(prefix: string): string | undefined {
  if (prefix.includes('{') || prefix.includes('}')) return 'it holds a brace, which would take over the keys\u2019 Redis Cluster hash tag'
  return undefined
}

/**
 * The key of a tag's version in `table`: `prefix` + `{` + `JSON.stringify(["tag", table, tag])` +
 * `}:tag`. A hash tag of its own per tag (tags spread over a Cluster's masters); it starts with a
 * string where a bucket's starts with a number, and ends in `:tag`, so it meets no other family.
 */
export function tagVersionKey(prefix: string, table: string, tag: string): string {
  checkTable(table)
  if (typeof tag !== 'string') throw badArgument(TypeError, `an L2 tag must be a string, got ${describe(tag)}`)
  return `${prefix}{${JSON.stringify(['tag', table, tag])}}:tag`
}

/** The longest an L2 entry may live: a lifetime and a grace of at most a year each (two years of 366 days). */
export const LONGEST_ENTRY_MS = 2 * 366 * 24 * 60 * 60 * 1000

/** How long a tag's version outlives its last invalidation: {@link LONGEST_ENTRY_MS}, so it outlives every entry that may carry the tag. */
export const TAG_TTL_MS = LONGEST_ENTRY_MS

/**
 * How long a version counter outlives the last version it issued: 7 days, renewed by every
 * `nextVersion`. A counter that lapses restarts above the live entry's version, so a lapse can only
 * matter to a writer that holds a version issued more than 7 days earlier and never used.
 */
export const VERSION_TTL_MS = 7 * 24 * 60 * 60 * 1000
