/**
 * Type tests of the public surface (mitt style): what must compile is checked with `expectTypeOf`,
 * what must not compile sits under `// @ts-expect-error`, so an unused directive fails too.
 * Run by `vitest` (typecheck mode, `spec/**\/*.test-d.ts`) and by `tsc --noEmit`; nothing here executes.
 */
import { describe, expectTypeOf, test } from 'vitest'
import type { InspectionEvent, Observer } from 'xstate'
import {
  type BatchAnswer,
  type BatchLoaderContext,
  type ClearResult,
  type CounterName,
  type Id,
  type Loader,
  type LoaderContext,
  type LoaderMayAnswerUndefined,
  type OwnerInspectionEvent,
  type OwnerInspector,
  type Stats,
  type TableEvents,
  Table,
  createTable,
  localBus,
  memoryL2,
} from '../src/index.js'
import { type ManualClock, manualClock } from '../src/testing.js'
import { Cluster, Redis } from 'ioredis'
import Valkey, { Cluster as ValkeyCluster } from 'iovalkey'
import { createClient, createCluster, createSentinel } from 'redis'
import { redisBus, redisL2, type RedisBusOptions, type RedisL2Options, type SentinelAddress, type SubscribedOptions } from '../src/redis.js'

interface Foo {
  foo: string
}

const foo: Foo = { foo: 'bar' }

describe('createTable<V>', () => {
  test('returns a Table<V> whose fetch resolves to V: no check at the call site', () => {
    const table = createTable<Foo>()
    expectTypeOf(table).toEqualTypeOf<Table<Foo>>()
    expectTypeOf(table.fetch('x', () => foo)).toEqualTypeOf<Promise<Foo>>()
    expectTypeOf(table.fetch).returns.toEqualTypeOf<Promise<Foo>>()
  })

  test('a table that caches "absent" says so in V, and then fetch resolves V | undefined', () => {
    const maybe = createTable<Foo | undefined>()
    expectTypeOf(maybe.fetch('x', () => undefined)).toEqualTypeOf<Promise<Foo | undefined>>()
    void maybe.put('x', undefined)
  })

  test('unknown option keys and ill-typed options are compile errors', () => {
    createTable<Foo>({ name: 'foos', ttl: 5, jitter: 0.2, capacity: 10, sweepInterval: 100, negativeTtl: 0, loadTimeout: 50, coalesce: false })
    // @ts-expect-error a typo of `ttl`
    createTable<Foo>({ tll: 5 })
    // @ts-expect-error `ttl` is a number of ms
    createTable<Foo>({ ttl: '5s' })
    // @ts-expect-error `coalesce` is a boolean
    createTable<Foo>({ coalesce: 'yes' })
  })
})

describe('fetch', () => {
  const table = createTable<Foo>()
  const strings = createTable<string>()

  test('the loader may return V or a PromiseLike of it; undefined (absent) only when V admits it', () => {
    expectTypeOf<Foo | PromiseLike<Foo>>().toMatchTypeOf<ReturnType<Loader<Foo>>>()
    expectTypeOf<ReturnType<Loader<Foo>>>().extract<LoaderMayAnswerUndefined>().not.toBeNever()
    expectTypeOf<ReturnType<Loader<Foo | undefined>>>().toEqualTypeOf<Foo | undefined | PromiseLike<Foo | undefined>>()
    table.fetch('x', () => foo)
    table.fetch('x', async () => foo)
    const thenable: PromiseLike<Foo> = Promise.resolve(foo)
    table.fetch('x', () => thenable)
    strings.fetch('x', () => 'a string')
    // @ts-expect-error undefined from a loader of a table whose V does not admit it
    table.fetch('x', () => undefined)
    // @ts-expect-error nor through a promise
    table.fetch('x', async () => undefined)
    // @ts-expect-error nor a put of undefined
    void table.put('x', undefined)
    const maybe = createTable<Foo | undefined>()
    maybe.fetch('x', () => undefined)
    maybe.fetch('x', async () => undefined)
  })

  test('a loader that may answer undefined is refused on a table whose V does not admit it, and accepted once V does', () => {
    const find = async (id: number): Promise<Foo | undefined> => (id > 0 ? foo : undefined)
    // @ts-expect-error the mistake: the error names LoaderMayAnswerUndefined, whose one property says the fix
    createTable<Foo, number>({ loader: (id) => find(id) })
    // @ts-expect-error an async loader too
    createTable<Foo, number>({ loader: async (id) => find(id) })
    // @ts-expect-error and fetch's loader
    void createTable<Foo, number>().fetch(1, (id) => find(id))
    createTable<Foo | undefined, number>({ loader: (id) => find(id) })
    // A loader that rejects or builds its promise still infers V.
    createTable<Foo, number>({ loader: () => Promise.reject(new Error('origin down')) })
    createTable<Foo, number>({ loader: () => new Promise((resolve) => setTimeout(() => resolve(foo), 1)) })
  })

  test('a batch answer holds undefined only when V admits it', () => {
    // @ts-expect-error a batch loader answering undefined for a table whose V does not admit it
    createTable<Foo, number>({ batchLoader: async (ids) => ids.map(() => undefined) })
    // @ts-expect-error nor an array that may hold it, without a promise
    createTable<Foo, number>({ batchLoader: (ids) => ids.map((id) => (id > 0 ? foo : undefined)) })
    // @ts-expect-error nor in a Map's values
    createTable<Foo, number>({ batchLoader: async (ids) => new Map(ids.map((id) => [id, id > 0 ? foo : undefined])) })
    const products = createTable<Foo, number>({ batchLoader: async (ids) => ids.map(() => foo) })
    expectTypeOf(products.get(1)).toEqualTypeOf<Promise<Foo>>()
    createTable<Foo, number>({ batchLoader: async (ids) => ids.map((id) => (id > 0 ? foo : new Error('broken'))) })
    createTable<Foo, number>({ batchLoader: async (ids) => new Map(ids.map((id) => [id, foo])) })
    const maybe = createTable<Foo | undefined, number>({ batchLoader: async (ids) => ids.map(() => undefined) })
    expectTypeOf(maybe.get(1)).toEqualTypeOf<Promise<Foo | undefined>>()
    expectTypeOf<BatchAnswer<Foo, number>>().toEqualTypeOf<ReadonlyArray<Foo | Error> | ReadonlyMap<number, Foo | Error>>()
  })

  test('a loader of the wrong type is a compile error', () => {
    // @ts-expect-error a number for a table of strings
    strings.fetch('x', () => 42)
    // @ts-expect-error a promise of a number for a table of strings
    strings.fetch('x', async () => 42)
    // @ts-expect-error a Foo lacking its field
    table.fetch('x', () => ({ bar: 1 }))
    // @ts-expect-error the loader must be a function
    table.fetch('x', foo)
  })

  test('the loader receives the id and a context with a signal', () => {
    table.fetch('x', (id, context) => {
      expectTypeOf(id).toEqualTypeOf<string>()
      expectTypeOf(context).toEqualTypeOf<LoaderContext>()
      expectTypeOf(context.signal).toEqualTypeOf<AbortSignal>()
      return foo
    })
  })

  test('a batch loader’s context reports per id, in the table’s id type, what a loader’s reports for its one id', () => {
    const numbers = createTable<Foo | undefined, number>()
    void numbers.fetchMany([1, 2], (ids, context) => {
      expectTypeOf(context).toEqualTypeOf<BatchLoaderContext<number>>()
      expectTypeOf(context.setVersion).toEqualTypeOf<(id: number, version: number) => void>()
      expectTypeOf(context.setTtl).toEqualTypeOf<(id: number, ms: number) => void>()
      context.setVersion(1, 7)
      // @ts-expect-error an id of another type than the table's
      context.setVersion('1', 7)
      // @ts-expect-error a version is a number
      context.setVersion(1, '7')
      // @ts-expect-error one id's version: the batch loader names the id
      context.setVersion(7)
      return ids.map(() => foo)
    })
  })

  test('the default id type is string; Id (string | number) is the widest a table takes', () => {
    expectTypeOf<Id>().toEqualTypeOf<string | number>()
    expectTypeOf(table.fetch).parameter(0).toEqualTypeOf<string>()
    table.fetch('a', (id: string) => ({ foo: id }))
    // @ts-expect-error a number id on a table of the default (string) ids
    table.fetch(1, () => foo)
    const either = createTable<Foo, Id>()
    either.fetch('a', () => foo)
    either.fetch(1, () => foo)
    // @ts-expect-error a boolean id
    table.fetch(true, () => foo)
    // @ts-expect-error an object id
    table.fetch({ id: 1 }, () => foo)
    // @ts-expect-error a bigint id
    table.fetch(1n, () => foo)
    // @ts-expect-error no id at all
    table.fetch(undefined, () => foo)
  })

  test('per-call options: signal and timeout, nothing else', () => {
    table.fetch('x', () => foo, { signal: AbortSignal.timeout(10), timeout: 5 })
    // @ts-expect-error `timeout` is a number of ms
    table.fetch('x', () => foo, { timeout: '5' })
    // @ts-expect-error a typo of `timeout`
    table.fetch('x', () => foo, { tiemout: 5 })
  })
})

describe('the id type K', () => {
  test('createTable<V, K> takes ids of K only, and the loader receives a K', () => {
    const byNumber = createTable<Foo, number>()
    expectTypeOf(byNumber).toEqualTypeOf<Table<Foo, number>>()
    byNumber.fetch(7, (id) => {
      expectTypeOf(id).toEqualTypeOf<number>()
      return foo
    })
    // @ts-expect-error a string id for a table of number ids
    byNumber.fetch('7', () => foo)
    // @ts-expect-error nor to put, invalidate, peek or has
    void byNumber.put('7', foo)
    // @ts-expect-error invalidate takes a K
    void byNumber.invalidate('7')
    // @ts-expect-error peek takes a K
    byNumber.peek('7')
    // @ts-expect-error has takes a K
    byNumber.has('7')
    const loader: Loader<Foo, number> = (id) => (expectTypeOf(id).toEqualTypeOf<number>(), foo)
    byNumber.fetch(1, loader)
  })

  test('a union of literal ids, and a loader for a wider id type serves a narrower table', () => {
    const regions = createTable<Foo, 'eu' | 'us'>()
    regions.fetch('eu', (id) => (expectTypeOf(id).toEqualTypeOf<'eu' | 'us'>(), foo))
    // @ts-expect-error not one of the table's ids
    regions.fetch('asia', () => foo)
    const anyId: Loader<Foo> = () => foo
    regions.fetch('us', anyId)
  })

  test('K is a string or a number type; the default is string', () => {
    // @ts-expect-error a boolean id type
    createTable<Foo, boolean>()
    expectTypeOf(createTable<Foo>()).toEqualTypeOf<Table<Foo, string>>()
    expectTypeOf(createTable<Foo, Id>()).toEqualTypeOf<Table<Foo, string | number>>()
  })
})

describe('peek, has, size and clear', () => {
  const table = createTable<Foo>()
  test('peek answers V | undefined, has a boolean, size a number, clear a ClearResult', () => {
    expectTypeOf(table.peek('x')).toEqualTypeOf<Foo | undefined>()
    expectTypeOf(table.has('x')).toEqualTypeOf<boolean>()
    expectTypeOf(table.size).toEqualTypeOf<number>()
    expectTypeOf(table.clear()).toEqualTypeOf<Promise<ClearResult>>()
    expectTypeOf<ClearResult['l2']>().toEqualTypeOf<'cleared' | 'failed' | 'none'>()
    // @ts-expect-error size is read-only
    table.size = 1
  })
})

describe('stats', () => {
  const table = createTable<Foo>()

  test('Table.stats(t) and t.stats() give the same numeric snapshot', () => {
    const stats = Table.stats(table)
    expectTypeOf(stats).toEqualTypeOf<Stats>()
    expectTypeOf(table.stats()).toEqualTypeOf<Stats>()
    expectTypeOf(stats.hits).toEqualTypeOf<number>()
    expectTypeOf(stats.hit_rate).toEqualTypeOf<number>()
    expectTypeOf(stats.coalesced).toEqualTypeOf<number>()
    expectTypeOf(stats.inflight).toEqualTypeOf<number>()
    // @ts-expect-error no such counter
    void stats.hitz
  })

  test('the keys of Stats are exactly the counters and the four gauges', () => {
    expectTypeOf<keyof Stats>().toEqualTypeOf<CounterName | 'size' | 'weight' | 'inflight' | 'hit_rate'>()
  })

  test('the snapshot is readonly', () => {
    const stats = Table.stats(table)
    // @ts-expect-error a snapshot is not written to
    stats.hits = 1
    // @ts-expect-error nor its derived rate
    stats.hit_rate = 1
  })
})

describe('events', () => {
  const table = createTable<Foo>()

  test('handlers are typed by event name', () => {
    table.events.on('fill', (e) => {
      expectTypeOf(e).toEqualTypeOf<TableEvents['fill']>()
      expectTypeOf(e.id).toEqualTypeOf<Id>()
      expectTypeOf(e.table).toEqualTypeOf<string>()
    })
    table.events.on('error', (e) => {
      expectTypeOf(e.id).toEqualTypeOf<Id | undefined>()
      expectTypeOf(e.error).toEqualTypeOf<unknown>()
    })
    table.events.on('sweep', (e) => expectTypeOf(e.swept).toEqualTypeOf<number>())
    // @ts-expect-error no such event
    table.events.on('fills', () => {})
    // @ts-expect-error a fill carries no `value`
    table.events.on('fill', (e) => e.value)
  })
})

describe('manualClock', () => {
  test('advance(ms), set(t) and now() exist, and it is a clock a table accepts', () => {
    const clock = manualClock()
    expectTypeOf(clock).toEqualTypeOf<ManualClock>()
    expectTypeOf(clock.advance).toEqualTypeOf<(ms: number) => void>()
    expectTypeOf(clock.set).toEqualTypeOf<(t: number) => void>()
    expectTypeOf(clock.now).returns.toEqualTypeOf<number>()
    expectTypeOf(manualClock).parameter(0).toEqualTypeOf<number | undefined>()
    createTable<Foo>({ clock })
    // @ts-expect-error advance takes ms as a number
    clock.advance('5')
  })
})

describe('inspect', () => {
  test('every xstate InspectionEvent is an OwnerInspectionEvent', () => {
    expectTypeOf<InspectionEvent>().toExtend<OwnerInspectionEvent>()
  })

  test('observers written against xstate types are accepted, as functions and as { next } objects', () => {
    const asFunction = (event: InspectionEvent): void => void event.rootId
    const asObserver: Observer<InspectionEvent> = { next: (event) => void event.type }
    createTable<Foo>({ inspect: asFunction })
    createTable<Foo>({ inspect: asObserver })
    createTable<Foo>({ inspect: (event) => expectTypeOf(event).toEqualTypeOf<OwnerInspectionEvent>() })
    expectTypeOf(asFunction).toExtend<OwnerInspector>()
    // @ts-expect-error an inspector is a function or an observer object
    createTable<Foo>({ inspect: 'verbose' })
  })
})

describe('closing with await using', () => {
  test('tables, stores and buses are AsyncDisposable, so await using compiles', async () => {
    expectTypeOf(createTable<Foo>()[Symbol.asyncDispose]).returns.toEqualTypeOf<Promise<void>>()
    expectTypeOf(memoryL2()[Symbol.asyncDispose]).returns.toEqualTypeOf<Promise<void>>()
    expectTypeOf(localBus()[Symbol.asyncDispose]).returns.toEqualTypeOf<Promise<void>>()
    expectTypeOf(redisL2({ url: 'redis://127.0.0.1:6379' })[Symbol.asyncDispose]).returns.toEqualTypeOf<Promise<void>>()
    expectTypeOf(redisBus({ url: 'redis://127.0.0.1:6379' })[Symbol.asyncDispose]).returns.toEqualTypeOf<Promise<void>>()
    await using table = createTable<Foo>({ l2: memoryL2(), bus: localBus(), closeStores: true })
    expectTypeOf(table).toExtend<AsyncDisposable>()
  })

  test('closeStores is a boolean', () => {
    createTable<Foo>({ closeStores: false })
    // @ts-expect-error closeStores takes a boolean
    createTable<Foo>({ closeStores: 'yes' })
  })
})

describe('the Redis connection options', () => {
  test('client takes an ioredis Redis or Cluster, and an iovalkey Redis or Cluster, in both adapters', () => {
    const clients = [new Redis({ lazyConnect: true }), new Cluster([], { lazyConnect: true }), new Valkey({ lazyConnect: true }), new ValkeyCluster([], { lazyConnect: true })] as const
    for (const client of clients) {
      expectTypeOf(client).toExtend<NonNullable<RedisBusOptions['client']>>()
      expectTypeOf(client).toExtend<NonNullable<RedisL2Options['client']>>()
    }
  })

  test('client takes a node-redis client made by createClient(), createCluster() or createSentinel(), RESP2 or RESP3, in both adapters', () => {
    const clients = [
      createClient(),
      createClient({ RESP: 3 }),
      createClient().withTypeMapping({}),
      createCluster({ rootNodes: [] }),
      createCluster({ rootNodes: [], RESP: 3 }),
      createSentinel({ name: 'mymaster', sentinelRootNodes: [] }),
    ] as const
    for (const client of clients) {
      expectTypeOf(client).toExtend<NonNullable<RedisBusOptions['client']>>()
      expectTypeOf(client).toExtend<NonNullable<RedisL2Options['client']>>()
    }
  })

  test('url is a string or seed nodes; sentinels come with a name; subscribed takes a timeout or a signal', () => {
    expectTypeOf<RedisL2Options['url']>().toEqualTypeOf<string | readonly string[] | undefined>()
    expectTypeOf<RedisBusOptions['sentinels']>().toEqualTypeOf<readonly SentinelAddress[] | undefined>()
    expectTypeOf<RedisBusOptions['name']>().toEqualTypeOf<string | undefined>()
    expectTypeOf(redisBus({ url: ['redis://a:7000', 'redis://b:7000'] }).subscribed)
      .parameter(0)
      .toEqualTypeOf<SubscribedOptions | undefined>()
    expectTypeOf<SubscribedOptions>().toEqualTypeOf<{ timeout?: number; signal?: AbortSignal }>()
  })
})
