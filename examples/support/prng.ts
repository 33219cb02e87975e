/**
 * Seeded randomness for the examples: the same seed gives the same run, on every machine.
 */

/** A seeded PRNG in [0, 1) (mulberry32). */
export function seeded(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = Math.imul(a ^ (a >>> 15), a | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/**
 * A Zipf sampler over ranks `0..n-1`: rank k is drawn with probability ∝ 1 / (k + 1)^s.
 * With s = 1 the hottest key gets about 1/H(n) of the reads (≈ 19% of 200 keys).
 */
export function zipf(n: number, s: number, random: () => number): () => number {
  if (!(Number.isInteger(n) && n >= 1)) throw new RangeError(`zipf: n must be an integer ≥ 1, got ${n}`)
  const cdf = new Float64Array(n)
  let total = 0
  for (let k = 0; k < n; k++) cdf[k] = total += 1 / (k + 1) ** s
  return () => {
    const u = random() * total
    let lo = 0
    let hi = n - 1
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (cdf[mid]! > u) hi = mid
      else lo = mid + 1
    }
    return lo
  }
}
