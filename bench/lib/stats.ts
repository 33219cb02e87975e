/** Median of a non-empty list (mean of the middle two for an even count). */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

/** The `p`-th percentile (0–100) of a non-empty list, nearest rank. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return sorted[rank]!
}

/** Half the range over the median, in percent: how far repetitions strayed. */
export function spreadPct(values: readonly number[]): number {
  if (values.length < 2) return 0
  const m = median(values)
  return m === 0 ? 0 : ((Math.max(...values) - Math.min(...values)) / 2 / Math.abs(m)) * 100
}

/** The most instants falling in any half-open window of `width` (a sliding window, not fixed bins). */
export function peakInWindow(instants: readonly number[], width: number): number {
  const sorted = [...instants].sort((a, b) => a - b)
  let best = 0
  let lo = 0
  for (let hi = 0; hi < sorted.length; hi++) {
    while (sorted[hi]! - sorted[lo]! >= width) lo++
    best = Math.max(best, hi - lo + 1)
  }
  return best
}
