import { describe, expect, it } from 'vitest'
import { LOOP_FACTOR, LOOP_SHARE, loopTrace } from '../bench/workloads/w9-loop-trace.js'
import { scanTrace, SCAN_SHARE } from '../bench/workloads/w9-scan-trace.js'
import { SHIFT_PHASES, shiftingZipfTrace } from '../bench/workloads/w9-shifting-trace.js'
import { traceShape, type Trace, type TraceShape } from '../bench/workloads/w9-trace.js'
import { stationaryZipfTrace } from '../bench/workloads/w9-zipf-trace.js'

const shape: TraceShape = { requests: 20_000, keySpace: 20_000, capacity: 200 }

/** Requests per id over `ids[from, to)`. */
function counts(ids: Uint32Array, from = 0, to = ids.length): Map<number, number> {
  const out = new Map<number, number>()
  for (let i = from; i < to; i++) out.set(ids[i]!, (out.get(ids[i]!) ?? 0) + 1)
  return out
}

/** The most requested ids of `ids[from, to)` that together take half its requests. */
function hotSet(ids: Uint32Array, from: number, to: number): Set<number> {
  const sorted = [...counts(ids, from, to)].sort((a, b) => b[1] - a[1])
  const hot = new Set<number>()
  let taken = 0
  for (const [id, n] of sorted) {
    if (taken >= (to - from) / 2) break
    hot.add(id)
    taken += n
  }
  return hot
}

const generators: [string, (shape: TraceShape, seed: number) => Trace][] = [
  ['stationary Zipf', stationaryZipfTrace],
  ['shifting Zipf', shiftingZipfTrace],
  ['Zipf with scans', scanTrace],
  ['loop with a hot set', loopTrace],
]

describe('W9 traces', () => {
  it('keep 1M requests over 1M ids at capacity 1 % at full size, and the ratio when scaled', () => {
    expect(traceShape(1)).toEqual({ requests: 1_000_000, keySpace: 1_000_000, capacity: 10_000 })
    expect(traceShape(0.02)).toEqual({ requests: 20_000, keySpace: 20_000, capacity: 200 })
  })

  for (const [label, make] of generators) {
    it(`${label}: the same seed gives the same trace, another seed another, every id in the key space`, () => {
      const a = make(shape, 7)
      expect(a.ids.length).toBe(shape.requests)
      expect(make(shape, 7).ids).toEqual(a.ids)
      expect(make(shape, 8).ids).not.toEqual(a.ids)
      expect(Math.max(...a.ids)).toBeLessThan(shape.keySpace)
    })
  }

  it("stationary Zipf: the popular ids stay put (most of one half's hot set is the other's)", () => {
    const { ids } = stationaryZipfTrace(shape, 7)
    const half = ids.length / 2
    const first = hotSet(ids, 0, half)
    const overlap = [...hotSet(ids, half, ids.length)].filter((id) => first.has(id)).length
    expect(overlap / first.size).toBeGreaterThan(0.6)
    expect([...counts(ids)].sort((a, b) => b[1] - a[1])[0]![0]).toBe(0)
  })

  it('shifting Zipf: the working set moves at every phase', () => {
    const trace = shiftingZipfTrace(shape, 7)
    let previous: Set<number> | undefined
    for (let p = 0; p < SHIFT_PHASES; p++) {
      const from = p * trace.phaseLength
      const to = Math.min(trace.ids.length, from + trace.phaseLength)
      const top = [...counts(trace.ids, from, to)].sort((a, b) => b[1] - a[1])[0]![0]
      expect(top).toBe((p * trace.shift) % shape.keySpace)
      const hot = hotSet(trace.ids, from, to)
      if (previous !== undefined) expect([...hot].filter((id) => previous!.has(id))).toEqual([])
      previous = hot
    }
  })

  it('Zipf with scans: every scan id is requested once, in bursts of capacity, a quarter of the requests', () => {
    const trace = scanTrace(shape, 7)
    const scans = [...trace.ids].filter((id) => id >= trace.firstScanId)
    expect(new Set(scans).size).toBe(scans.length)
    expect(scans.length).toBe(shape.keySpace - trace.firstScanId)
    expect(scans.length / shape.requests).toBeCloseTo(SCAN_SHARE, 2)
    expect(trace.burst).toBe(shape.capacity)
    let run = 0
    const runs: number[] = []
    for (const id of trace.ids) {
      if (id >= trace.firstScanId) run++
      else if (run > 0) runs.push(run), (run = 0)
    }
    if (run > 0) runs.push(run)
    expect(new Set(runs)).toEqual(new Set([trace.burst]))
  })

  it('loop with a hot set: the loop cycles in order over more ids than the capacity, half the requests', () => {
    const trace = loopTrace(shape, 7)
    expect(trace.loopLength).toBe(LOOP_FACTOR * shape.capacity)
    expect(trace.loopLength).toBeGreaterThan(shape.capacity)
    const loop = [...trace.ids].filter((id) => id < trace.loopLength)
    loop.forEach((id, i) => expect(id).toBe(i % trace.loopLength))
    expect(loop.length).toBeGreaterThan(2 * trace.loopLength)
    expect(Math.abs(loop.length / shape.requests - LOOP_SHARE)).toBeLessThan(0.02)
  })
})
