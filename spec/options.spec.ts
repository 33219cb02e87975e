import { describe, expect, it } from 'vitest'
import { createTable } from '../src/index.js'
import { manualClock } from '../src/testing.js'

describe('invalid options fail closed at construction, naming the option and the value', () => {
  it.each([
    [{ ttl: 0 }, RangeError, /"ttl".*got 0/],
    [{ ttl: Number.NaN }, RangeError, /"ttl".*got NaN/],
    [{ ttl: Number.POSITIVE_INFINITY }, RangeError, /"ttl".*got Infinity/],
    [{ ttl: '60s' }, TypeError, /"ttl".*got "60s"/],
    [{ jitter: -0.1 }, RangeError, /"jitter".*got -0.1/],
    [{ jitter: 1 }, RangeError, /"jitter".*got 1/],
    [{ capacity: 1.5 }, RangeError, /"capacity".*got 1.5/],
    [{ capacity: 0 }, RangeError, /"capacity".*got 0/],
    [{ sweepInterval: 0 }, RangeError, /"sweepInterval"/],
    [{ negativeTtl: -1 }, RangeError, /"negativeTtl".*got -1/],
    [{ loadTimeout: 0 }, RangeError, /"loadTimeout"/],
    [{ coalesce: 'yes' }, TypeError, /"coalesce".*got "yes"/],
    [{ name: '' }, TypeError, /"name"/],
    [{ clock: { now: () => 0 } }, TypeError, /"clock"/],
    [{ random: 0.5 }, TypeError, /"random".*got 0.5/],
    [{ tll: 5 }, TypeError, /unknown option "tll"/],
    [{ l2: {} }, TypeError, /"l2" must be an L2Store/],
    [{ l2: { get() {}, set() {}, nextVersion() {}, clear() {}, close() {}, timeout: 0 } }, RangeError, /"l2.timeout".*got 0/],
    [{ bus: 42 }, TypeError, /"bus" must be a Bus.*got 42/],
  ])('%o → %s', (options, Kind, message) => {
    expect(() => createTable(options as never)).toThrow(Kind)
    expect(() => createTable(options as never)).toThrow(message)
  })

  it('refuses a non-object', () => {
    expect(() => createTable(42 as never)).toThrow(TypeError)
  })
})

describe('bad ids and loaders are refused before the lookup and count as neither hit nor miss', () => {
  it.each([true, null, undefined, {}, [], Number.NaN, Number.POSITIVE_INFINITY, 10n, Symbol('s')])('id %s → TypeError', async (id) => {
    const table = createTable<string>({ clock: manualClock() })
    await expect(table.fetch(id as never, () => 'v')).rejects.toThrow(TypeError)
    await expect(table.fetch(id as never, () => 'v')).rejects.toThrow(/id must be a string or a finite number/)
    expect(table.stats()).toMatchObject({ hits: 0, misses: 0 })
    await table.close()
  })

  it.each([undefined, 'loader', 42])('loader %s → TypeError', async (loader) => {
    const table = createTable<string>({ clock: manualClock() })
    await expect(table.fetch('k', loader as never)).rejects.toThrow(/needs a loader function/)
    expect(table.stats()).toMatchObject({ hits: 0, misses: 0 })
    await table.close()
  })

  it('a non-AbortSignal signal is refused', async () => {
    const table = createTable<string>({ clock: manualClock() })
    await expect(table.fetch('k', () => 'v', { signal: { aborted: false } as never })).rejects.toThrow(/"signal"/)
    await table.close()
  })
})
