/**
 * Doubtful: `createTable`, `redisL2` and `localBus` refuse bad options with a TypeError naming them,
 * but `memoryL2` takes any `clock` and fails only later, on each call, where the table's L2 policy
 * turns every failure into a miss: a `memoryL2({ clock: Date })` silently never caches anything.
 */
import { describe, expect, it } from 'vitest'
import { memoryL2 } from '../src/index.js'

describe('memoryL2 options', () => {
  it.fails('refuse a clock that is not a Clock, as createTable does', () => {
    expect(() => memoryL2({ clock: Date as never })).toThrow(TypeError)
  })
})
