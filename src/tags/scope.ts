/**
 * Namespaces and tags as keys. A namespace view (`table.namespace(name)`) stores its rows under keys
 * of its own in the table's one key space (their format: see `core/id.ts`).
 *
 * A row's tags become tag keys that name their scope: the tag `t` given in the namespace path `P` is
 * carried as `t` of every enclosing scope (so the base table's `invalidateTags(['t'])` reaches it)
 * and as `t` of `P` itself; and every row of a namespace carries its namespaces' marks, which that
 * namespace's `clear()` invalidates. See `tag-versions.ts` for how a tag key is compared on read.
 */
import { badArgument, badId, describe } from '../core/errors.js'
import { type Id, MAX_ID_LENGTH, MAX_NAMESPACE_DEPTH, MAX_NAMESPACE_LENGTH, isId, isMarked, keyPrefixOf, keyWith, unkey } from '../core/id.js'

/** Most tags one row, or one `invalidateTags` call, may carry. */
export const MAX_TAGS = 64

/**
 * Where a table (or a view of it) keeps its ids: the base table (path `[]`) or a namespace path.
 * Made once per view; maps its ids to keys and back, and names its tag keys.
 */
export class Scope {
  /** The keys of this scope start with this (the base table's: none). */
  readonly keyPrefix: string
  /** The mark every row of this namespace carries (its `clear()` invalidates it); `undefined` for the base table. */
  readonly clearKey: string | undefined

  constructor(
    /** The namespace names, outermost first; empty for the base table. */
    readonly path: readonly string[],
  ) {
    this.keyPrefix = path.length === 0 ? '' : keyPrefixOf(path)
    this.clearKey = path.length === 0 ? undefined : clearKeyOf(path)
  }

  /** The scope of the namespace `name` inside this one; throws a TypeError/RangeError for a bad name or too deep a nesting. */
  child(name: string): Scope {
    if (typeof name !== 'string' || name.length === 0 || name.length > MAX_NAMESPACE_LENGTH) {
      // Too long is out of range (a RangeError, as for an id; the shown name gives its length); anything else is of the wrong kind.
      const Kind = typeof name === 'string' && name.length > MAX_NAMESPACE_LENGTH ? RangeError : TypeError
      throw badArgument(Kind, `namespace(name) takes a non-empty string of at most ${MAX_NAMESPACE_LENGTH} characters, got ${describe(name)}`)
    }
    if (this.path.length >= MAX_NAMESPACE_DEPTH) throw badArgument(RangeError, `namespace(${describe(name)}): namespaces nest at most ${MAX_NAMESPACE_DEPTH} deep`)
    return new Scope([...this.path, name])
  }

  /** The key of `id` (a valid id) in this scope: the id itself in the base table. */
  key(id: Id): Id {
    return this.path.length === 0 ? id : keyWith(this.keyPrefix, id)
  }

  /** True when `key` is a key of this scope or of a namespace inside it. */
  holds(key: Id): boolean {
    return this.path.length === 0 || (typeof key === 'string' && key.startsWith(this.keyPrefix))
  }

  /** The tag key of `tag` as this scope names it. */
  tagKey(tag: string): string {
    return tagKeyOf(this.path, tag)
  }
}

/** The base table's scope. */
export const ROOT_SCOPE = new Scope([])

/** The tag key of `tag` in the scope `path`: `[path, tag]` as JSON. */
function tagKeyOf(path: readonly string[], tag: string): string {
  return JSON.stringify([path, tag])
}

/** The mark of the namespace `path`: `[path]` as JSON (no tag key has one element). */
function clearKeyOf(path: readonly string[]): string {
  return JSON.stringify([path])
}

/** The tag keys a row carries and its birth on the tag version clock (see `tags/tag-versions.ts`). */
export interface RowTags {
  readonly keys: readonly string[]
  readonly born: number
}

/**
 * The tag keys a row of `key` carries, given the tags its load or put named (already checked):
 * each tag in every scope from the base table to the row's namespace, and the mark of each
 * namespace it is in. `undefined` for a row of the base table without tags (it pays nothing).
 */
export function rowTagKeys(key: Id, tags: readonly string[] | undefined): readonly string[] | undefined {
  const path = unkey(key)?.path ?? []
  if (path.length === 0 && (tags === undefined || tags.length === 0)) return undefined
  const keys: string[] = []
  for (let depth = 0; depth <= path.length; depth++) {
    const scope = path.slice(0, depth)
    if (depth > 0) keys.push(clearKeyOf(scope))
    for (const tag of tags ?? []) keys.push(tagKeyOf(scope, tag))
  }
  return keys
}

/** `tags` when it is a list of tags a row may carry (or an invalidation may name): else throws a TypeError/RangeError saying what is wrong. */
export function checkTags(tags: unknown, where: string): readonly string[] {
  if (!Array.isArray(tags)) throw badArgument(TypeError, `${where} takes an array of tags (strings), got ${describe(tags)}`)
  if (tags.length > MAX_TAGS) throw badArgument(RangeError, `${where} takes at most ${MAX_TAGS} tags, got ${tags.length}`)
  for (let i = 0; i < tags.length; i++) {
    const tag: unknown = tags[i]
    if (typeof tag !== 'string' || tag.length === 0) throw badArgument(TypeError, `${where}: tags[${i}] must be a non-empty string, got ${describe(tag)}`)
    if (tag.length > MAX_ID_LENGTH) throw badArgument(RangeError, `${where}: tags[${i}] is longer than ${MAX_ID_LENGTH} characters (got ${tag.length})`)
  }
  return [...new Set(tags as string[])]
}

/** True for an id a caller may give: a valid id that is not a namespace key. */
export function isCallerId(id: unknown): id is Id {
  return isId(id) && !isMarked(id)
}

/** The error for a string id that starts with the namespace mark, naming the call. */
export function markedId(call: string, id: string): TypeError {
  return badArgument(TypeError, `${call} id must not start with U+DC00 (a lone surrogate, which marks namespace keys), got ${describe(id)}`) as TypeError
}

/** Why `id` is no id a caller may give (see {@link isCallerId}), as the error naming the call; `undefined` when it is one. */
export function badCallerId(call: string, id: unknown): TypeError | RangeError | undefined {
  if (!isId(id)) return badId(call, id)
  return isMarked(id) ? markedId(call, id as string) : undefined
}
