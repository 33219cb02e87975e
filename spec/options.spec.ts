import { describe, expect, it } from 'vitest'
import { createTable, memoryL2 } from '../src/index.js'
import { redisBus, redisL2 } from '../src/redis.js'
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
    [{ random: () => 2 }, RangeError, /"random" must return a number in \[0, 1\) when called, got 2/],
    [{ lease: true }, TypeError, /"lease" needs an l2 whose store has leases.*: give the table an l2$/],
    [{ lease: true, l2: { get() {}, set() {}, nextVersion() {}, clear() {}, close() {} } }, TypeError, /"lease" needs an l2 whose store has leases.*: the l2 given has no leases$/],
    [{ tll: 5 }, TypeError, /unknown option "tll"/],
    [{ l2: {} }, TypeError, /"l2" must be an L2Store/],
    [{ l2: { get() {}, set() {}, nextVersion() {}, clear() {}, close() {}, timeout: 0 } }, RangeError, /"l2.timeout".*got 0/],
    [{ bus: 42 }, TypeError, /"bus" must be a Bus.*got 42/],
    [{ l2: { get() {}, set() {}, nextVersion() {}, clear() {}, close() {}, keySpace: 7 } }, TypeError, /"l2.keySpace" must be a string of at most 1024 code units.*got 7/],
  ])('%o → %s', (options, Kind, message) => {
    expect(() => createTable(options as never)).toThrow(Kind)
    expect(() => createTable(options as never)).toThrow(message)
  })

  it('refuses a non-object', () => {
    expect(() => createTable(42 as never)).toThrow(TypeError)
  })
})

describe('the Redis adapters refuse what they do not know, as createTable does, before they connect', () => {
  const url = 'redis://127.0.0.1:1'
  it.each([
    ['redisL2', () => redisL2({ url, prefx: 'shop:' } as never), /redisL2: unknown option "prefx" \(known: client, url, sentinels, name, onError, prefix, codec, timeout, maxValueBytes\)/],
    ['redisL2', () => redisL2({ url, sentinels: null } as never), /redisL2: option "sentinels" is null/],
    ['redisL2', () => redisL2({ url, onError: 'log' } as never), /redisL2: the option `onError` must be a function, got "log"/],
    ['redisL2', () => redisL2({ url, timeout: 2 ** 31 }), /redisL2: the option `timeout` must be a number of ms in \[1, 2147483647\].*got 2147483648/],
    ['redisBus', () => redisBus({ url, namespce: 'shop:' } as never), /redisBus: unknown option "namespce"/],
    ['redisBus', () => redisBus({ url, onHandlerError: null } as never), /redisBus: option "onHandlerError" is null/],
    ['redisBus', () => redisBus({ url, onHandlerError: 1 } as never), /redisBus: the option `onHandlerError` must be a function, got 1/],
  ])('%s: %s', (_, make, message) => {
    expect(make).toThrow(message)
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

  it('the refusal names the call that was made: get, or fetch, in the base table and in a namespace', async () => {
    const table = createTable<string>({ clock: manualClock(), loader: (id) => id })
    for (const reader of [table, table.namespace('acme')]) {
      await expect(reader.get({} as never)).rejects.toThrow(/^echostore: get id must be a string or a finite number, got/)
      await expect(reader.fetch({} as never, () => 'v')).rejects.toThrow(/^echostore: fetch id must be a string or a finite number, got/)
      await expect(reader.fetch('k', 42 as never)).rejects.toThrow(/^echostore: fetch\("k"\) needs a loader function, got 42/)
    }
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

describe('null options: undefined takes the default, null is refused, naming the option', () => {
  const tableOptions = [
    'name',
    'ttl',
    'jitter',
    'capacity',
    'sweepInterval',
    'negativeTtl',
    'loadTimeout',
    'coalesce',
    'grace',
    'staleWhileRevalidate',
    'graceBackoff',
    'softTimeout',
    'lease',
    'clock',
    'random',
    'l2',
    'bus',
    'closeStores',
    'inspect',
    'loader',
    'batchLoader',
    'maxBatchSize',
    'maxSize',
    'sizeOf',
  ]

  it.each(tableOptions)('createTable({ %s: null }) → TypeError naming it; undefined takes its default', (option) => {
    expect(() => createTable({ [option]: null } as never)).toThrow(TypeError)
    expect(() => createTable({ [option]: null } as never)).toThrow(`createTable: option "${option}" is null: omit it (or pass undefined) for its default`)
    createTable({ [option]: undefined, clock: manualClock() } as never).close()
  })

  it('maxSize: null and sizeOf: null are refused naming the null one, even beside a valid partner', () => {
    expect(() => createTable({ maxSize: null, sizeOf: () => 1 } as never)).toThrow(TypeError)
    expect(() => createTable({ maxSize: null, sizeOf: () => 1 } as never)).toThrow('createTable: option "maxSize" is null: omit it (or pass undefined) for its default')
    expect(() => createTable({ maxSize: 10, sizeOf: null } as never)).toThrow(TypeError)
    expect(() => createTable({ maxSize: 10, sizeOf: null } as never)).toThrow('createTable: option "sizeOf" is null: omit it (or pass undefined) for its default')
  })

  it('lease settings, memoryL2, fetch, put, invalidate and invalidateTags options refuse null too, and take undefined as the default', async () => {
    const clock = manualClock()
    expect(() => memoryL2({ clock: null } as never)).toThrow(/memoryL2: option "clock" is null/)
    const l2 = memoryL2({ clock: undefined })
    expect(() => createTable({ clock, l2, lease: { ttl: null } } as never)).toThrow(/option "lease": option "ttl" is null/)
    const table = createTable<string>({ clock, l2, lease: { ttl: undefined, wait: undefined } })
    for (const option of ['signal', 'timeout', 'softTimeout', 'forceRefresh']) {
      await expect(table.fetch('a', () => 'v', { [option]: null })).rejects.toThrow(new RegExp(`fetch\\("a"\\): option "${option}" is null`))
      expect(await table.fetch('a', () => 'v', { [option]: undefined })).toBe('v')
    }
    for (const option of ['version', 'ttl', 'tags']) {
      await expect(table.put('a', 'v', { [option]: null })).rejects.toThrow(new RegExp(`put\\("a"\\): option "${option}" is null`))
      expect(await table.put('a', 'v', { [option]: undefined })).toMatchObject({ applied: true })
    }
    await expect(table.invalidate('a', { version: null } as never)).rejects.toThrow(/invalidate\("a"\): option "version" is null/)
    await expect(table.invalidateTags(['t'], { version: null } as never)).rejects.toThrow(/invalidateTags\(tags\): option "version" is null/)
    await expect(table.invalidate('a', { version: null } as never)).rejects.toBeInstanceOf(TypeError)
    expect(await table.invalidate('a', { version: undefined })).toMatchObject({ applied: true })
    await table.close()
  })

  it.each(['prefix', 'codec', 'timeout', 'maxValueBytes', 'client', 'sentinels', 'name', 'onError'])('redisL2({ url, %s: null }) → TypeError naming it (before any connection)', (option) => {
    const options = { url: 'redis://127.0.0.1:1', [option]: null }
    expect(() => redisL2(options as never)).toThrow(TypeError)
    expect(() => redisL2(options as never)).toThrow(new RegExp(`redisL2: option "${option}" is null`))
  })

  it.each(['namespace', 'channel', 'sharded', 'onHandlerError', 'client', 'sentinels', 'name', 'onError'])('redisBus({ url, %s: null }) → TypeError naming it (before any connection)', (option) => {
    const options = { url: 'redis://127.0.0.1:1', [option]: null }
    expect(() => redisBus(options as never)).toThrow(TypeError)
    expect(() => redisBus(options as never)).toThrow(new RegExp(`redisBus: option "${option}" is null`))
  })
})

describe('unknown options are refused at run time by put, invalidate and invalidateTags, and nothing is changed', () => {
  it('put rejects with a TypeError naming the option and the known ones, and stores nothing', async () => {
    const table = createTable<string>({ clock: manualClock() })
    const refused = table.put('a', 'v', { verison: 3 } as never)
    await expect(refused).rejects.toBeInstanceOf(TypeError)
    await expect(refused).rejects.toMatchObject({ code: 'ECHOSTORE_BAD_ARGUMENT' })
    await expect(refused).rejects.toThrow('echostore: put("a"): unknown option "verison" (known: version, ttl, tags)')
    expect(table.peek('a')).toBeUndefined()
    expect(table.size).toBe(0)
    await table.close()
  })

  it('invalidate rejects with a TypeError naming the option and the known ones, and leaves the row', async () => {
    const table = createTable<string>({ clock: manualClock() })
    await table.put('a', 'v')
    const refused = table.invalidate('a', { verison: 3 } as never)
    await expect(refused).rejects.toBeInstanceOf(TypeError)
    await expect(refused).rejects.toMatchObject({ code: 'ECHOSTORE_BAD_ARGUMENT' })
    await expect(refused).rejects.toThrow('echostore: invalidate("a"): unknown option "verison" (known: version)')
    expect(table.peek('a')).toBe('v')
    await table.close()
  })

  it('invalidateTags rejects with a TypeError naming the option and the known ones, and invalidates nothing', async () => {
    const table = createTable<string>({ clock: manualClock() })
    await table.fetch('a', (_, { setTags }) => (setTags(['t']), 'v'))
    const refused = table.invalidateTags(['t'], { verison: 3 } as never)
    await expect(refused).rejects.toBeInstanceOf(TypeError)
    await expect(refused).rejects.toMatchObject({ code: 'ECHOSTORE_BAD_ARGUMENT' })
    await expect(refused).rejects.toThrow('echostore: invalidateTags(tags): unknown option "verison" (known: version)')
    expect(table.peek('a')).toBe('v')
    expect(table.stats().tag_invalidations).toBe(0)
    await table.close()
  })
})

describe('an L2 store’s timeout is a timer length', () => {
  const store = (timeout: number) => {
    const { get, set, nextVersion, clear, close } = memoryL2()
    return { get, set, nextVersion, clear, close, timeout }
  }

  it('above 2^31 − 1 ms is refused by createTable with a RangeError naming it', () => {
    expect(() => createTable({ l2: store(2 ** 31) })).toThrow(RangeError)
    expect(() => createTable({ l2: store(2 ** 31) })).toThrow('option "l2.timeout" must be a number of ms in [1, 2147483647], got 2147483648')
  })

  it('of exactly 2^31 − 1 ms is taken', async () => {
    const table = createTable({ l2: store(2 ** 31 - 1), clock: manualClock() })
    await table.close()
  })
})
