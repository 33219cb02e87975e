import { seededRandom } from './random.js'

/**
 * Runs `fn` with `Math.random` swapped for a PRNG seeded with `seed`, and puts the original back
 * when it settles. For a measurement whose contender may draw `Math.random` inside its eviction
 * policy (transitory's 1-in-1000 admission coin), so that every run gives the same figures.
 */
export async function withSeededMathRandom<T>(seed: number, fn: () => Promise<T>): Promise<T> {
  const original = Math.random
  Math.random = seededRandom(seed)
  try {
    return await fn()
  } finally {
    Math.random = original
  }
}
