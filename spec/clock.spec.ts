import { describe, expect, it } from 'vitest'
import { manualClock } from '../src/testing.js'
import { systemClock } from '../src/index.js'
import { inBackground } from '../src/core/clock.js'

describe('manualClock', () => {
  it('advance runs every timer that falls due, in due order, with now() at each timer’s instant', () => {
    const clock = manualClock(100)
    const log: string[] = []
    clock.setTimeout(() => log.push(`b@${clock.now()}`), 20)
    clock.setTimeout(() => log.push(`a@${clock.now()}`), 10)
    clock.setTimeout(() => log.push(`c@${clock.now()}`), 20)
    clock.setTimeout(() => log.push('late'), 31)
    clock.advance(30)
    expect(log).toEqual(['a@110', 'b@120', 'c@120'])
    expect(clock.now()).toBe(130)
    expect(clock.pending()).toBe(1)
    expect(clock.nextDue()).toBe(131)
    clock.advance(1)
    expect(clock.nextDue()).toBeUndefined()
  })

  it('runs a timer scheduled during advance when it falls within the span; clearTimeout cancels', () => {
    const clock = manualClock()
    const log: number[] = []
    clock.setTimeout(() => clock.setTimeout(() => log.push(clock.now()), 5), 5)
    const cancelled = clock.setTimeout(() => log.push(-1), 7)
    clock.clearTimeout(cancelled)
    clock.advance(10)
    expect(log).toEqual([10])
  })

  it('set never moves backwards and refuses bad input', () => {
    const clock = manualClock(50)
    clock.set(10)
    expect(clock.now()).toBe(50)
    expect(() => clock.advance(-1)).toThrow(RangeError)
    expect(() => clock.set(Number.NaN)).toThrow(RangeError)
  })
})

describe('systemClock', () => {
  it('schedules timers that keep the process alive (they bound a pending promise); background ones are unref()’d', () => {
    const aMinute = 60_000
    const handle = systemClock.setTimeout(() => {}, aMinute) as NodeJS.Timeout
    expect(handle.hasRef()).toBe(true)
    systemClock.clearTimeout(handle)
    const background = inBackground(systemClock.setTimeout(() => {}, aMinute)) as NodeJS.Timeout
    expect(background.hasRef()).toBe(false)
    systemClock.clearTimeout(background)
  })
})
