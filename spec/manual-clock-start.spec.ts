/** Clocks are non-negative milliseconds: `manualClock` refuses a negative (or not finite) start. */
import { describe, expect, it } from 'vitest'
import { manualClock } from '../src/testing.js'

describe('manualClock’s start', () => {
  it.each([-1, -0.5, Number.NaN, Number.POSITIVE_INFINITY])('%s is refused with a RangeError', (start) => {
    expect(() => manualClock(start)).toThrow(RangeError)
    expect(() => manualClock(start)).toThrow(/manualClock: start must be a finite number ≥ 0/)
  })

  it('0 and a positive start are taken', () => {
    expect(manualClock(0).now()).toBe(0)
    expect(manualClock(5).now()).toBe(5)
  })
})
