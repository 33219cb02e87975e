/** A row's key: a string or a finite number. `1` and `'1'` are different ids in every layer. */
export type Id = string | number

/**
 * The longest string id a caller may give, in UTF-16 code units: 16,384. A namespace stores it under
 * a longer key (see `tags/scope.ts`'s `MAX_KEY_LENGTH`), which every layer below the table takes.
 */
export const MAX_ID_LENGTH = 16_384

/** True for a valid id: a string of at most {@link MAX_ID_LENGTH} code units, or a finite number. */
export function isId(id: unknown): id is Id {
  return typeof id === 'string' ? id.length <= MAX_ID_LENGTH : typeof id === 'number' && Number.isFinite(id)
}
