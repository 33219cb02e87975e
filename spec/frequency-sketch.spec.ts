/**
 * The admission filter's aging: every counter is halved once the sketch has counted ten times the
 * capacity, counting only the occurrences that raised an estimate (as Caffeine does). So a herd of
 * requests on one id, or requests of an id already at the top count, ages nobody else's counts.
 */
import { describe, expect, it } from 'vitest'
import { FrequencySketch } from '../src/rows/frequency-sketch.js'

const CAPACITY = 64
/** Occurrences counted before the counters are halved (ten times the capacity). */
const SAMPLE = 10 * CAPACITY
const HOT = 0x1234_5678
const OTHER = 0x0bad_cafe

describe('the admission filter', () => {
  it('a herd on one id counts as at most 15 occurrences towards aging: another id keeps its count', () => {
    const sketch = new FrequencySketch(CAPACITY)
    for (let i = 0; i < 4; i++) sketch.increment(OTHER)
    sketch.increment(HOT, 100 * SAMPLE)
    expect(sketch.frequency(HOT)).toBe(15)
    expect(sketch.frequency(OTHER)).toBe(4)
  })

  it('requests of an id already at 15 do not age the others', () => {
    const sketch = new FrequencySketch(CAPACITY)
    for (let i = 0; i < 4; i++) sketch.increment(OTHER)
    for (let i = 0; i < 2 * SAMPLE; i++) sketch.increment(HOT)
    expect(sketch.frequency(OTHER)).toBe(4)
  })

  it('is halved once ten times the capacity of raising occurrences were counted', () => {
    const sketch = new FrequencySketch(CAPACITY)
    for (let i = 0; i < 8; i++) sketch.increment(OTHER)
    // Distinct ids counted once each raise their estimates: the sample fills, and every count is halved.
    let counted = 8
    for (let id = 1; counted < SAMPLE; id++) {
      const before = sketch.frequency(id * 0x9e37_79b1)
      sketch.increment(id * 0x9e37_79b1)
      if (before < 15) counted++
    }
    expect(sketch.frequency(OTHER)).toBe(4)
  })
})
