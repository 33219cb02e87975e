/**
 * Ids and the keys rows are stored under. A caller's id is a key as it is; a namespace view
 * (`table.namespace(name)`) stores the id `x` of the namespace path `["tenant-a"]` under the key
 * `\uDC00["tenant-a","x"]`. The mark, a lone low surrogate, is no text: a table refuses a string id
 * that starts with it, so no id of the base table meets a namespace's key, and JSON keeps every key
 * unambiguous (`1` and `"1"`, `a` of `["b"]` and `b` of `["a"]` stay apart) in every layer. This
 * module is the one place that writes and reads that format (`tags/scope.ts` holds the scopes).
 */
/** A row's key: a string or a finite number. `1` and `'1'` are different ids in every layer. */
export type Id = string | number

/**
 * The longest string id a caller may give, in UTF-16 code units: 16,384. A namespace stores it under
 * a longer key (see `MAX_KEY_LENGTH` below), which every layer below the table takes.
 */
export const MAX_ID_LENGTH = 16_384

/** True for a valid id: a string of at most {@link MAX_ID_LENGTH} code units, or a finite number. */
export function isId(id: unknown): id is Id {
  return typeof id === 'string' ? id.length <= MAX_ID_LENGTH : typeof id === 'number' && Number.isFinite(id)
}

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
/**
 * True for a row's key: a caller's id (see {@link isId}; one starting with the mark too,
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

/** The start of every key of the namespace `path` (at least one name): the mark, then the JSON of its names, open for an id. */
export function keyPrefixOf(path: readonly string[]): string {
  return `${NAMESPACE_MARK}${JSON.stringify(path).slice(0, -1)},`
}

/** The key of `id` in the namespace whose keys start with `prefix` (see {@link keyPrefixOf}). */
export function keyWith(prefix: string, id: Id): string {
  return `${prefix}${JSON.stringify(id)}]`
}

/** The id a key of a namespace stands for, and the namespace path; `undefined` for an id of the base table. */
export function unkey(key: Id): { path: string[]; id: Id } | undefined {
  if (!isMarked(key)) return undefined
  const parts = JSON.parse((key as string).slice(1)) as Id[]
  return { path: parts.slice(0, -1) as string[], id: parts[parts.length - 1]! }
}
