import { badArgument, describe } from '../core/errors.js'
import { badId, isId, type Id } from '../core/id.js'

/**
 * The Redis key layout. A data key is `prefix` verbatim, then `{` + `JSON.stringify([table, id])` + `}`;
 * the version key of the same (table, id) is that data key followed by `:v`. For example
 * `echostore:{["emoji_sets","party"]}` and `echostore:{["emoji_sets","party"]}:v`.
 *
 * - Unambiguous: JSON quotes and escapes the table and the id, so table `a:b` with id `c` never meets
 *   table `a` with id `b:c`, and the number `1` (`[..,1]`) never meets the string `'1'` (`[..,"1"]`).
 *   No encoding of a pair is a proper suffix of another, so even distinct prefixes never collide.
 * - Data keys end in `}` (or `}:<generation>` once the table was cleared, see {@link entryKey}),
 *   version keys in `:v`, lease keys in `:lease`: the families never share a key.
 * - The braces make the pair a Redis Cluster hash tag, so a data key and its version key live in one
 *   slot (the version script touches both). A prefix that itself holds `{...}` takes over the hash tag
 *   (every key of that prefix in one slot); a prefix holding a lone `{` or an empty `{}` breaks the
 *   co-location under Cluster, so keep braces out of prefixes unless you mean a whole-prefix tag.
 * - `0` and `-0` are one id (as in a `Map`).
 */
export function l2Key(prefix: string, table: string, id: Id): string {
  if (typeof table !== 'string') throw badArgument(TypeError, `an L2 table name must be a string, got ${describe(table)}`)
  if (!isId(id)) throw badId('an L2', id)
  return `${prefix}{${JSON.stringify([table, id])}}`
}

/**
 * The key of (table, id)'s entry in the table's `generation` (0 until the table is first cleared):
 * {@link l2Key} itself for generation 0, else followed by `:<generation>`. It keeps the (table, id)
 * hash tag, so under Cluster it shares a slot with the version key.
 */
export function entryKey(prefix: string, table: string, id: Id, generation: number): string {
  const key = l2Key(prefix, table, id)
  return generation === 0 ? key : `${key}:${generation}`
}

/**
 * The key holding a table's generation, bumped by each clear: `prefix` + `{` + `JSON.stringify([table])`
 * + `}:gen`. A one-element array never equals a pair, so it meets no entry or version key.
 */
export function generationKey(prefix: string, table: string): string {
  if (typeof table !== 'string') throw badArgument(TypeError, `an L2 table name must be a string, got ${describe(table)}`)
  return `${prefix}{${JSON.stringify([table])}}:gen`
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
 * How long a version counter outlives the last version it issued: 7 days, renewed by every
 * `nextVersion`. A counter that lapses restarts above the live entry's version, so a lapse can only
 * matter to a writer that holds a version issued more than 7 days earlier and never used.
 */
export const VERSION_TTL_MS = 7 * 24 * 60 * 60 * 1000
