import { num } from '../lib/format.js'
import { zipfSequence } from '../lib/random.js'
import type { Trace, TraceShape } from './w9-trace.js'
import { ZIPF_ALPHA } from './w9-zipf-trace.js'

/** Phases of the shifting trace: each moves the popular ids to another part of the key space. */
export const SHIFT_PHASES = 5

/** The shifting trace and where its phases start and its popular ids sit. */
export interface ShiftingTrace extends Trace {
  /** Requests per phase (the last phase may be shorter). */
  phaseLength: number
  /** How far each phase moves the ranks: in phase p, rank r is id (r + p · shift) mod keySpace. */
  shift: number
}

/**
 * Trace (b), popularity that shifts over time: Zipf(α = {@link ZIPF_ALPHA}) ranks over the whole
 * key space (seeded by `seed`), cut into {@link SHIFT_PHASES} equal phases; in phase p, rank r is
 * id (r + p · keySpace / phases) mod keySpace. Each phase's popular ids are ones the phase before
 * barely asked for, so the working set moves wholesale at every phase boundary.
 */
export function shiftingZipfTrace(shape: TraceShape, seed: number): ShiftingTrace {
  const ids = zipfSequence(shape.requests, shape.keySpace, ZIPF_ALPHA, seed)
  const phaseLength = Math.ceil(shape.requests / SHIFT_PHASES)
  const shift = Math.floor(shape.keySpace / SHIFT_PHASES)
  for (let i = 0; i < ids.length; i++) ids[i] = (ids[i]! + Math.floor(i / phaseLength) * shift) % shape.keySpace
  return {
    name: 'shifting',
    title: 'shifting Zipf',
    ids,
    phaseLength,
    shift,
    recipe: `Zipf(α = ${ZIPF_ALPHA}) ranks over all ids in ${SHIFT_PHASES} phases of ${num(phaseLength)} requests; in phase p, rank r is id (r + p · ${num(shift)}) mod ${num(shape.keySpace)}, so the popular ids move at each phase`,
  }
}
