import { seeded as seededRandom } from '../../examples/support/prng.js'

/** A seeded PRNG (mulberry32): same seed, same sequence, in [0, 1); shared with the examples. */
export { seededRandom }

/** `count` uniform draws from [0, n), from a seeded PRNG. */
export function uniformSequence(count: number, n: number, seed: number): Uint32Array {
  const rnd = seededRandom(seed)
  const out = new Uint32Array(count)
  for (let i = 0; i < count; i++) out[i] = Math.floor(rnd() * n)
  return out
}

/**
 * Draws ranks in [0, n) from Zipf(s), by inverse CDF over the exact weights 1/(k+1)^s, from a
 * seeded PRNG: rank 0 is the most popular. Each call returns the next draw.
 */
export function zipfSampler(n: number, s: number, seed: number): () => number {
  return zipfFrom(n, s, seededRandom(seed))
}

/** Ranks in [0, n) from Zipf(s), drawn with `rnd` (a `Math.random`-like source): see {@link zipfSampler}. */
export function zipfFrom(n: number, s: number, rnd: () => number): () => number {
  const cdf = new Float64Array(n)
  let total = 0
  for (let k = 0; k < n; k++) {
    total += 1 / (k + 1) ** s
    cdf[k] = total
  }
  return () => {
    const u = rnd() * total
    let lo = 0
    let hi = n - 1
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (cdf[mid]! < u) lo = mid + 1
      else hi = mid
    }
    return lo
  }
}

/** `count` draws of ranks in [0, n) from Zipf(s) (see {@link zipfSampler}). */
export function zipfSequence(count: number, n: number, s: number, seed: number): Uint32Array {
  const draw = zipfSampler(n, s, seed)
  const out = new Uint32Array(count)
  for (let i = 0; i < count; i++) out[i] = draw()
  return out
}

/** Ids `${prefix}${i}` for i in [0, n), built once so no timed loop allocates a key. */
export function makeIds(prefix: string, n: number): string[] {
  const ids = new Array<string>(n)
  for (let i = 0; i < n; i++) ids[i] = `${prefix}${i}`
  return ids
}
