/**
 * Namespaces and tags as keys. A namespace view (`table.namespace(name)`) stores its rows under keys
 * of its own in the table's one key space: the id `x` of the namespace path `["tenant-a"]` is the
 * key `\uDC00["tenant-a","x"]`. The mark, a lone low surrogate, is no text: a table refuses a string
 * id that starts with it, so no id of the base table meets a namespace's key, and JSON keeps every
 * key unambiguous (`1` and `"1"`, `a` of `["b"]` and `b` of `["a"]` stay apart) in every layer.
 *
 * A row's tags become tag keys that name their scope: the tag `t` given in the namespace path `P` is
 * carried as `t` of every enclosing scope (so the base table's `invalidateTags(['t'])` reaches it)
 * and as `t` of `P` itself; and every row of a namespace carries its namespaces' marks, which that
 * namespace's `clear()` invalidates. See `tag-versions.ts` for how a tag key is compared on read.
 */
import { badArgument, badId, describe } from '../core/errors.js'
import { type Id, MAX_ID_LENGTH, isId } from '../core/id.js'

/** The first code unit of every namespace key: a lone low surrogate, which no base id may start with. */
export const NAMESPACE_MARK = '\uDC00'
const MARK_CODE = 0xdc00

/** Longest namespace name, in UTF-16 code units. */
export const MAX_NAMESPACE_LENGTH = 256
/** Deepest nesting of namespaces (`table.namespace(a).namespace(b)` is 2). */
export const MAX_NAMESPACE_DEPTH = 4
/**
 * The longest key a namespace makes, in UTF-16 code units: the mark, then the JSON of the deepest
 * path of the longest names and of the longest id, every code unit escaped in 6 (104,465). Every
 * layer below a table's calls (its rows, L2 keys, bus messages) takes keys up to this length, so a
 * view takes every id its table takes.
 */
export const MAX_KEY_LENGTH = 1 + 1 + MAX_NAMESPACE_DEPTH * (6 * MAX_NAMESPACE_LENGTH + 3) + 6 * MAX_ID_LENGTH + 3
/** Most tags one row, or one `invalidateTags` call, may carry. */
export const MAX_TAGS = 64

/**
 * True for a row's key: a caller's id (see `core/id.ts`'s `isId`; one starting with the mark too,
 * which the table refuses before) or a namespace's key, of at most {@link MAX_KEY_LENGTH} code units.
 */
export function isKey(key: unknown): key is Id {
  return isId(key) || (typeof key === 'string' && key.length <= MAX_KEY_LENGTH && isMarked(key))
}

/** The id a caller gave for `key`: the id inside a namespace's key, else the key itself. For messages, which name the caller's id. */
export function callerIdOf(key: Id): Id {
  return unkey(key)?.id ?? key
}

/** True for a string id that starts with the namespace mark: a key of a namespace, never an id of the base table. */
export function isMarked(id: Id): boolean {
  return typeof id === 'string' && id.charCodeAt(0) === MARK_CODE
}

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
    this.keyPrefix = path.length === 0 ? '' : `${NAMESPACE_MARK}${JSON.stringify(path).slice(0, -1)},`
    this.clearKey = path.length === 0 ? undefined : clearKeyOf(path)
  }

  /** The scope of the namespace `name` inside this one; throws a TypeError/RangeError for a bad name or too deep a nesting. */
  child(name: string): Scope {
    if (typeof name !== 'string' || name.length === 0 || name.length > MAX_NAMESPACE_LENGTH) {
      throw badArgument(TypeError, `namespace(name) takes a non-empty string of at most ${MAX_NAMESPACE_LENGTH} characters, got ${describe(name)}`)
    }
    if (this.path.length >= MAX_NAMESPACE_DEPTH) throw badArgument(RangeError, `namespace(${describe(name)}): namespaces nest at most ${MAX_NAMESPACE_DEPTH} deep`)
    return new Scope([...this.path, name])
  }

  /** The key of `id` (a valid id) in this scope: the id itself in the base table. */
  key(id: Id): Id {
    return this.path.length === 0 ? id : `${this.keyPrefix}${JSON.stringify(id)}]`
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

/** The id a key of a namespace stands for, and the namespace path; `undefined` for an id of the base table. */
export function unkey(key: Id): { path: string[]; id: Id } | undefined {
  if (!isMarked(key)) return undefined
  const parts = JSON.parse((key as string).slice(1)) as Id[]
  return { path: parts.slice(0, -1) as string[], id: parts[parts.length - 1]! }
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
