/**
 * The ranges the README gives each numeric option of createTable, at both ends: the bound itself
 * is taken, the next value past it is refused with a RangeError naming the option and the value.
 */
import { describe, expect, it } from 'vitest'
import { createTable, memoryL2 } from '../src/index.js'
import { MAX_BATCH_SIZE, MAX_CAPACITY, MAX_TTL } from '../src/limits.js'
import { manualClock } from '../src/testing.js'

const TIMER = 2 ** 31 - 1
const weigh = () => 1

const bounds: [string, Record<string, unknown>, Record<string, unknown>][] = [
  ['ttl', { ttl: MAX_TTL }, { ttl: MAX_TTL + 1 }],
  ['ttl', { ttl: 1 }, { ttl: 0.999 }],
  ['capacity', { capacity: MAX_CAPACITY }, { capacity: MAX_CAPACITY + 1 }],
  ['capacity', { capacity: 1 }, { capacity: 0 }],
  ['maxSize', { maxSize: 2 ** 53 - 1, sizeOf: weigh }, { maxSize: 2 ** 53, sizeOf: weigh }],
  ['maxSize', { maxSize: 1, sizeOf: weigh }, { maxSize: 0, sizeOf: weigh }],
  ['sweepInterval', { sweepInterval: TIMER }, { sweepInterval: TIMER + 1 }],
  ['negativeTtl', { negativeTtl: MAX_TTL }, { negativeTtl: MAX_TTL + 1 }],
  ['negativeTtl', { negativeTtl: 0 }, { negativeTtl: -1 }],
  ['loadTimeout', { loadTimeout: TIMER }, { loadTimeout: TIMER + 1 }],
  ['grace', { grace: MAX_TTL }, { grace: MAX_TTL + 1 }],
  ['grace', { grace: 0 }, { grace: -1 }],
  ['graceBackoff', { graceBackoff: TIMER }, { graceBackoff: TIMER + 1 }],
  ['graceBackoff', { graceBackoff: 1 }, { graceBackoff: 0.5 }],
  ['softTimeout', { softTimeout: TIMER }, { softTimeout: TIMER + 1 }],
  ['softTimeout', { softTimeout: 1 }, { softTimeout: 0 }],
  ['maxBatchSize', { maxBatchSize: MAX_BATCH_SIZE }, { maxBatchSize: MAX_BATCH_SIZE + 1 }],
  ['maxBatchSize', { maxBatchSize: 1 }, { maxBatchSize: 0 }],
  ['jitter', { jitter: 0 }, { jitter: -Number.EPSILON }],
  ['jitter', { jitter: 0.999999 }, { jitter: 1 }],
  ['lease.ttl', { lease: { ttl: TIMER }, l2: memoryL2() }, { lease: { ttl: TIMER + 1 }, l2: memoryL2() }],
  ['lease.ttl', { lease: { ttl: 1 }, l2: memoryL2() }, { lease: { ttl: 0 }, l2: memoryL2() }],
  ['lease.wait', { lease: { wait: TIMER }, l2: memoryL2() }, { lease: { wait: TIMER + 1 }, l2: memoryL2() }],
  ['lease.wait', { lease: { wait: 1 }, l2: memoryL2() }, { lease: { wait: 0 }, l2: memoryL2() }],
]

describe('numeric options at the ends of their ranges', () => {
  it.each(bounds)('%s: %o is taken, %o refused naming it and the value', async (name, taken, refused) => {
    const table = createTable({ clock: manualClock(), ...taken })
    await table.close()
    const value = name.startsWith('lease.') ? (refused.lease as Record<string, unknown>)[name.slice(6)] : refused[name]
    expect(() => createTable({ clock: manualClock(), ...refused })).toThrow(RangeError)
    expect(() => createTable({ clock: manualClock(), ...refused })).toThrow(`option "${name}"`)
    expect(() => createTable({ clock: manualClock(), ...refused })).toThrow(`got ${String(value)}`)
  })

  it('the refusal reads as the README shows it, with the code of a bad argument', () => {
    let caught: unknown
    try {
      createTable({ ttl: 0 })
    } catch (error) {
      caught = error
    }
    expect(caught).toBeInstanceOf(RangeError)
    expect((caught as Error).message).toBe('echostore: option "ttl" must be a number of ms in [1, 31536000000] (a year), got 0')
    expect((caught as { code?: string }).code).toBe('ECHOSTORE_BAD_ARGUMENT')
  })
})
