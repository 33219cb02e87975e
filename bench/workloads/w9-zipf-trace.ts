import { zipfSequence } from '../lib/random.js'
import type { Trace, TraceShape } from './w9-trace.js'

/** The Zipf exponent α of the popular part of every W9 trace. */
export const ZIPF_ALPHA = 1

/**
 * Trace (a), stationary Zipf: every request draws a rank from Zipf(α = {@link ZIPF_ALPHA}) over
 * the whole key space with a PRNG seeded by `seed`; rank r is id r. Popularity never changes, so
 * the best a cache can do is hold the most popular ids.
 */
export function stationaryZipfTrace(shape: TraceShape, seed: number): Trace {
  return {
    name: 'zipf',
    title: 'stationary Zipf',
    ids: zipfSequence(shape.requests, shape.keySpace, ZIPF_ALPHA, seed),
    recipe: `every request a Zipf(α = ${ZIPF_ALPHA}) rank over all ids, rank r = id r`,
  }
}
