/** A row's key: a string or a finite number. `1` and `'1'` are different ids in every layer. */
export type Id = string | number

/** True for a valid id: any string, or a finite number. */
export function isId(id: unknown): id is Id {
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id))
}

/** Describes a value for an error message without throwing on odd inputs. */
export function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value)
  if (typeof value === 'bigint') return `${value}n`
  if (typeof value === 'function') return 'a function'
  if (typeof value === 'symbol') return value.toString()
  if (value === null || typeof value !== 'object') return String(value)
  return Array.isArray(value) ? 'an array' : 'an object'
}
