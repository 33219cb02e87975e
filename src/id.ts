/** A row's key: a string or a finite number. `1` and `'1'` are different ids in every layer. */
export type Id = string | number

/** True for a valid id: any string, or a finite number. */
export function isId(id: unknown): id is Id {
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id))
}
