import { performance } from 'node:perf_hooks'

const started = performance.now()

/** One progress line on stderr, stamped with seconds since the bench started. */
export function progress(message: string): void {
  const t = ((performance.now() - started) / 1000).toFixed(1).padStart(6)
  process.stderr.write(`[bench ${t}s] ${message}\n`)
}
