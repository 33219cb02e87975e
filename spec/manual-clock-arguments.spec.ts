/**
 * `manualClock`, `advance` and `set` refuse what is not a time with a TypeError (wrong type) or a
 * RangeError (a number out of range), code `ECHOSTORE_BAD_ARGUMENT`, naming the call and showing
 * the value: a string is never coerced (`advance('5')` once moved the clock to "05"), and a symbol
 * is shown, not thrown on while the message is built.
 */
import { describe, expect, it } from 'vitest'
import { manualClock } from '../src/testing.js'
import { refusal } from './support/refusal.js'

describe('manualClock refuses a bad time, naming the call and the value', () => {
  it('a start of the wrong type is a TypeError that shows it', () => {
    for (const [start, shown] of [
      ['5', '"5"'],
      [Symbol('t'), 'Symbol(t)'],
      [5n, '5n'],
      [{}, 'an object'],
    ] as const) {
      const error = refusal(() => manualClock(start as never))
      expect(error).toBeInstanceOf(TypeError)
      expect(error).toMatchObject({ code: 'ECHOSTORE_BAD_ARGUMENT', message: `echostore: manualClock: start must be a finite number ≥ 0 (ms; leave it out to start at 0), got ${shown}` })
    }
  })

  it('a start out of range is a RangeError', () => {
    expect(refusal(() => manualClock(-1))).toMatchObject({ name: 'RangeError', message: expect.stringMatching(/manualClock: start must be a finite number ≥ 0 .*got -1$/) })
  })

  it('advance takes a finite number ≥ 0: a string is refused, not added to the time', () => {
    const clock = manualClock(0)
    const string = refusal(() => clock.advance('5' as never))
    expect(string).toBeInstanceOf(TypeError)
    expect(string).toMatchObject({ code: 'ECHOSTORE_BAD_ARGUMENT', message: 'echostore: manualClock.advance: ms must be a finite number ≥ 0, got "5"' })
    expect(refusal(() => clock.advance(Symbol('x') as never))).toMatchObject({ name: 'TypeError', message: 'echostore: manualClock.advance: ms must be a finite number ≥ 0, got Symbol(x)' })
    for (const [ms, shown] of [
      [-1, '-1'],
      [Number.NaN, 'NaN'],
      [Number.POSITIVE_INFINITY, 'Infinity'],
    ] as const) {
      const error = refusal(() => clock.advance(ms))
      expect(error).toBeInstanceOf(RangeError)
      expect((error as Error).message).toBe(`echostore: manualClock.advance: ms must be a finite number ≥ 0, got ${shown}`)
    }
    expect(clock.now()).toBe(0)
    clock.advance(5)
    expect(clock.now()).toBe(5)
  })

  it('set takes a finite number: the message names set and says what an earlier time does', () => {
    const clock = manualClock(10)
    expect(refusal(() => clock.set(Number.NaN))).toMatchObject({
      name: 'RangeError',
      code: 'ECHOSTORE_BAD_ARGUMENT',
      message: 'echostore: manualClock.set: t must be a finite number of ms (a time before now() leaves the clock where it is), got NaN',
    })
    expect(refusal(() => clock.set('20' as never))).toBeInstanceOf(TypeError)
    clock.set(5)
    expect(clock.now()).toBe(10)
  })
})
