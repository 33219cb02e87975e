import { num } from '../lib/format.js'
import { seededRandom, zipfSequence } from '../lib/random.js'
import type { Trace, TraceShape } from './w9-trace.js'
import { ZIPF_ALPHA } from './w9-zipf-trace.js'

/** Loop length over capacity: the loop holds more ids than any contender may keep. */
export const LOOP_FACTOR = 1.5
/** Share of the loop trace's requests that step the loop. */
export const LOOP_SHARE = 0.5

/** The loop trace and the length of its loop. */
export interface LoopTrace extends Trace {
  /** Ids [0, loopLength) are the loop, requested in order and around again. */
  loopLength: number
}

/**
 * Trace (d), a loop mixed with a hot set: each request is, by a coin seeded by `seed`, with
 * probability {@link LOOP_SHARE} the loop's next id (ids 0 .. loopLength − 1 in order, then around
 * again; loopLength = {@link LOOP_FACTOR} × capacity), otherwise a Zipf(α = {@link ZIPF_ALPHA}) draw
 * over the other ids. A cache that keeps the most recent ids never hits the loop; one that keeps
 * part of it hits that part every time around.
 */
export function loopTrace(shape: TraceShape, seed: number): LoopTrace {
  const loopLength = Math.round(LOOP_FACTOR * shape.capacity)
  const zipf = zipfSequence(shape.requests, shape.keySpace - loopLength, ZIPF_ALPHA, seed)
  const coin = seededRandom(seed + 1)
  const ids = new Uint32Array(shape.requests)
  let cursor = 0
  for (let i = 0; i < shape.requests; i++) {
    if (coin() < LOOP_SHARE) {
      ids[i] = cursor
      cursor = (cursor + 1) % loopLength
    } else {
      ids[i] = loopLength + zipf[i]!
    }
  }
  return {
    name: 'loop',
    title: `loop (${LOOP_FACTOR}× capacity) + Zipf`,
    ids,
    loopLength,
    recipe: `each request, by a seeded coin, with probability ${LOOP_SHARE} the next id of a loop over ids [0, ${num(loopLength)}) (${LOOP_FACTOR} × capacity, in order, around again), otherwise a Zipf(α = ${ZIPF_ALPHA}) draw over ids [${num(loopLength)}, ${num(shape.keySpace)})`,
  }
}
