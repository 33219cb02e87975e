/**
 * `memoryL2` refuses a bad `clock` at once, with a TypeError naming it, as `createTable`, `redisL2`
 * and `localBus` do: taken, it would fail every call later, where the table's L2 policy turns each
 * failure into a miss, and a `memoryL2({ clock: Date })` would silently never cache anything.
 */
import { describe, expect, it } from 'vitest'
import { memoryL2 } from '../src/index.js'

describe('memoryL2 options', () => {
  it('refuse a clock that is not a Clock, and unknown options, naming them', () => {
    expect(() => memoryL2({ clock: Date as never })).toThrow(TypeError)
    expect(() => memoryL2({ clock: Date as never })).toThrow(/memoryL2: the option `clock` must be an object with now\(\), setTimeout\(fn, ms\) and clearTimeout\(handle\)/)
    expect(() => memoryL2({ clok: {} } as never)).toThrow(/memoryL2: unknown option "clok"/)
  })
})
