/** True when `value` is an object with every one of `methods` (false, too, when reading them throws). */
export function hasMethods(value: unknown, methods: readonly string[]): boolean {
  try {
    return value !== null && typeof value === 'object' && methods.every((m) => typeof (value as Record<string, unknown>)[m] === 'function')
  } catch {
    return false
  }
}
