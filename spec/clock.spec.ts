import { describe, expect, it } from 'vitest'
import { manualClock, memoryL2 } from '../src/testing.js'
import { createTable, systemClock } from '../src/index.js'
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

describe('a clock given to a table or a memoryL2', () => {
  const reading = (now: () => unknown) => ({ now, setTimeout: () => 0, clearTimeout: () => {} }) as never
  it('is read once as it is given: a now() that throws, or reads anything but a finite number of ms ≥ 0, is refused naming the option', () => {
    const bad: [string, () => unknown, string][] = [
      [
        'throws',
        () => {
          throw new Error('no time')
        },
        '(it threw: no time)',
      ],
      ['NaN', () => Number.NaN, '(it read NaN)'],
      ['negative', () => -1, '(it read -1)'],
      ['a string', () => '5', '(it read "5")'],
      ['Infinity', () => Number.POSITIVE_INFINITY, '(it read Infinity)'],
    ]
    for (const [name, now, said] of bad) {
      expect(() => createTable({ clock: reading(now) }), name).toThrow(RangeError)
      expect(() => createTable({ clock: reading(now) }), name).toThrow(`option "clock" must have a now() that reads a finite number of ms ≥ 0 ${said}`)
      expect(() => memoryL2({ clock: reading(now) }), name).toThrow(`memoryL2: the option \`clock\` must have a now() that reads a finite number of ms ≥ 0 ${said}`)
    }
  })
})

describe('the system clock', () => {
  it('never goes backwards and does not follow a step of the wall clock: a table’s lifetimes are measured on it', async () => {
    const realNow = Date.now
    const first = systemClock.now()
    try {
      Date.now = () => realNow() - 3_600_000 // the wall clock steps back an hour
      await new Promise((resolve) => setTimeout(resolve, 5))
      const after = systemClock.now()
      expect(after).toBeGreaterThanOrEqual(first)
      expect(after - first).toBeLessThan(60_000)
    } finally {
      Date.now = realNow
    }
  })
})

describe('manualClock timers of lengths Node does not honour', () => {
  it('wait 1 ms, as Node’s do, for NaN, Infinity or a length past the longest timer; none moves time off its line', () => {
    const clock = manualClock(100)
    const ran: string[] = []
    for (const [name, ms] of [
      ['NaN', Number.NaN],
      ['Infinity', Number.POSITIVE_INFINITY],
      ['too long', 2 ** 31],
    ] as const)
      clock.setTimeout(() => ran.push(name), ms)
    expect(clock.nextDue()).toBe(101)
    clock.advance(1)
    expect(ran).toEqual(['NaN', 'Infinity', 'too long'])
    expect(clock.now()).toBe(101)
    clock.advance(4)
    expect(clock.now()).toBe(105)
  })
})

describe('a clock that throws once it was taken', () => {
  it('inside the owner’s processing: the caller it met rejects with what it threw (nothing waits for ever), and the table goes on', async () => {
    const base = manualClock(0)
    let calls = 0
    let throwAt = -1
    const clock = {
      now() {
        if (++calls === throwAt) throw new Error('the clock broke once')
        return base.now()
      },
      setTimeout: base.setTimeout,
      clearTimeout: base.clearTimeout,
    }
    const table = createTable<string>({ clock, sweepInterval: 1e9 })
    const errors: unknown[] = []
    table.events.on('error', ({ error }) => errors.push(error))
    expect(await table.fetch('warm', () => 'w')).toBe('w')
    throwAt = calls + 1 // the next reading throws: the owner's, as it starts the flight of a cold id
    const met = table.fetch('a', () => 'v')
    await expect(met).rejects.toThrow('the clock broke once')
    expect(errors).toEqual([new Error('the clock broke once')])
    expect(await table.fetch('b', () => 'vb')).toBe('vb')
    await table.close()
  })
})
