const gcFn = (globalThis as { gc?: () => void }).gc

/** True when the process runs with `--expose-gc`. */
export const canCollect = typeof gcFn === 'function'

/** Forces full collections (a few, so finalizers and weak maps settle) when gc is exposed. */
export function collect(passes = 2): void {
  if (gcFn === undefined) return
  for (let i = 0; i < passes; i++) gcFn()
}
