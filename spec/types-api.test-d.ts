/**
 * Type tests of what the README's API section names and spec/types.test-d.ts did not hold: each
 * option, method, event payload, error property and counter exists under its README name with the
 * README's type, and the inferences a caller leans on (number ids through loaders and views, getMany's
 * result, get without a loader, undefined only where V admits it). Nothing here executes.
 */
import { describe, expectTypeOf, test } from 'vitest'
import {
  type BatchLoaderContext,
  COUNTER_NAMES,
  type ChangeResult,
  type ClearResult,
  type CounterName,
  type EchoStoreError,
  type FetchOptions,
  type FetchTimeoutError,
  type Id,
  type L2CorruptEntryError,
  type L2TimeoutError,
  type L2UnfitValueError,
  type LoadTimeoutError,
  type Loader,
  type LoaderContext,
  type MissingPeerDependencyError,
  type RedisUnreachableError,
  type Stats,
  Table,
  type TableClosedError,
  type TableError,
  type TableEvents,
  type TableOptions,
  createTable,
  memoryL2,
} from '../src/index.js'

interface Foo {
  foo: string
}
const foo: Foo = { foo: 'bar' }

describe('Loader<V, K> with number ids', () => {
  test('a table of number ids takes loaders of number ids, through options, fetch, get and getMany', () => {
    const byNumber = createTable<Foo, number>({ loader: (id) => (expectTypeOf(id).toEqualTypeOf<number>(), foo) })
    expectTypeOf(byNumber.get(1)).toEqualTypeOf<Promise<Foo>>()
    expectTypeOf(byNumber.getMany([1, 2])).toEqualTypeOf<Promise<Array<Foo | undefined>>>()
    // @ts-expect-error a string id on a table of number ids
    void byNumber.get('1')
    // @ts-expect-error nor among getMany's ids
    void byNumber.getMany([1, '2'])
    // @ts-expect-error a loader of string ids cannot serve a table of number ids
    createTable<Foo, number>({ loader: (id: string) => ({ foo: id }) })
    const loader: Loader<Foo, number> = (id) => ({ foo: id.toFixed(0) })
    void byNumber.fetch(3, loader)
    // @ts-expect-error a Loader<Foo, number> does not serve a table of string ids
    void createTable<Foo>().fetch('x', loader)
  })

  test('null is a value, undefined (absent) only when V admits it, also for put', () => {
    const nullable = createTable<Foo | null>()
    expectTypeOf(nullable.fetch('x', () => null)).toEqualTypeOf<Promise<Foo | null>>()
    // @ts-expect-error null admits no undefined
    void nullable.fetch('x', () => undefined)
    // @ts-expect-error nor a put of it
    void nullable.put('x', undefined)
  })
})

describe('namespace views', () => {
  test('a view (nested too) is a Table of the same V and K', () => {
    const byNumber = createTable<Foo, number>({ loader: () => foo })
    const acme = byNumber.namespace('acme')
    expectTypeOf(acme).toEqualTypeOf<Table<Foo, number>>()
    expectTypeOf(acme.namespace('eu')).toEqualTypeOf<Table<Foo, number>>()
    expectTypeOf(acme.get(1)).toEqualTypeOf<Promise<Foo>>()
    expectTypeOf(acme.clear()).toEqualTypeOf<Promise<ClearResult>>()
    expectTypeOf(acme.close()).toEqualTypeOf<Promise<void>>()
    // @ts-expect-error a view takes the table's ids only
    void acme.fetch('1', () => foo)
    // @ts-expect-error a namespace's name is a string
    byNumber.namespace(7)
  })
})

describe('get, getMany and fetchMany', () => {
  test('get without a loader compiles and answers Promise<V>: no loader is a run-time TypeError, not a type error', () => {
    const bare = createTable<Foo>()
    expectTypeOf(bare.get('x')).toEqualTypeOf<Promise<Foo>>()
    expectTypeOf(bare.get).parameter(1).toEqualTypeOf<FetchOptions | undefined>()
  })

  test('getMany and fetchMany answer Array<V | undefined> (a Map answer may lack an id), in the order of readonly ids', () => {
    const table = createTable<Foo>({ batchLoader: (ids) => ids.map(() => foo) })
    const ids: readonly string[] = ['a', 'b']
    expectTypeOf(table.getMany(ids)).toEqualTypeOf<Promise<Array<Foo | undefined>>>()
    expectTypeOf(table.getMany(ids, { timeout: 5 })).toEqualTypeOf<Promise<Array<Foo | undefined>>>()
    const many = table.fetchMany(ids, (asked, context) => {
      expectTypeOf(asked).toEqualTypeOf<string[]>()
      expectTypeOf(context).toEqualTypeOf<BatchLoaderContext<string>>()
      return new Map(asked.map((id) => [id, foo]))
    })
    expectTypeOf(many).toEqualTypeOf<Promise<Array<Foo | undefined>>>()
    const maybe = createTable<Foo | undefined>()
    expectTypeOf(maybe.getMany(['a'])).toEqualTypeOf<Promise<Array<Foo | undefined>>>()
    // @ts-expect-error getMany takes an array of ids, not one id
    void table.getMany('a')
    // @ts-expect-error fetchMany needs its batch loader
    void table.fetchMany(ids)
  })
})

describe('per-call options and the other operations, as the README names them', () => {
  const table = createTable<Foo>()

  test('fetch takes { signal?, timeout?, softTimeout?, forceRefresh? }', () => {
    expectTypeOf<FetchOptions>().toEqualTypeOf<{ signal?: AbortSignal; timeout?: number; softTimeout?: number; forceRefresh?: boolean }>()
    void table.fetch('x', () => foo, { softTimeout: 50, forceRefresh: true })
    // @ts-expect-error forceRefresh is a boolean
    void table.fetch('x', () => foo, { forceRefresh: 'yes' })
    // @ts-expect-error softTimeout is a number of ms
    void table.fetch('x', () => foo, { softTimeout: '50ms' })
  })

  test('put takes { version?, ttl?, tags? }, invalidate and invalidateTags { version? }; each resolves a ChangeResult', () => {
    expectTypeOf(table.put('x', foo, { version: 3, ttl: 1_000, tags: ['depot:leeds'] })).toEqualTypeOf<Promise<ChangeResult>>()
    expectTypeOf(table.invalidate('x', { version: 4 })).toEqualTypeOf<Promise<ChangeResult>>()
    expectTypeOf(table.invalidateTags(['depot:leeds'], { version: 5 })).toEqualTypeOf<Promise<ChangeResult>>()
    expectTypeOf<ChangeResult>().toEqualTypeOf<{ version: number; applied: boolean; l2: 'written' | 'refused' | 'failed' | 'none'; broadcast: boolean }>()
    expectTypeOf<ClearResult>().toEqualTypeOf<{ l2: 'cleared' | 'failed' | 'none'; broadcast: boolean }>()
    // @ts-expect-error invalidate takes no ttl
    void table.invalidate('x', { ttl: 5 })
    // @ts-expect-error tags are strings
    void table.put('x', foo, { tags: [1] })
    // @ts-expect-error invalidateTags takes an array of tags
    void table.invalidateTags('depot:leeds')
  })

  test('setCoalescing, close, origin, name, events, stats', () => {
    expectTypeOf(table.setCoalescing).toEqualTypeOf<(on: boolean) => void>()
    expectTypeOf(table.close()).toEqualTypeOf<Promise<void>>()
    expectTypeOf(table.origin).toEqualTypeOf<string>()
    expectTypeOf(table.name).toEqualTypeOf<string>()
    expectTypeOf(Table.stats).toEqualTypeOf<(table: { stats(): Stats }) => Stats>()
    // @ts-expect-error setCoalescing takes a boolean
    table.setCoalescing('on')
  })
})

describe('table options', () => {
  test('every option the README lists, with its type', () => {
    createTable<Foo | undefined, number>({
      name: 'foos',
      ttl: 60_000,
      jitter: 0.1,
      capacity: 10,
      maxSize: 1_000,
      sizeOf: (value, id) => (expectTypeOf(value).toEqualTypeOf<Foo>(), expectTypeOf(id).toEqualTypeOf<number>(), value.foo.length),
      sweepInterval: 1_000,
      negativeTtl: 0,
      loadTimeout: 100,
      coalesce: true,
      grace: 1_000,
      staleWhileRevalidate: true,
      graceBackoff: 100,
      softTimeout: 50,
      lease: { ttl: 100, wait: 200 },
      l2: memoryL2(),
      loader: () => undefined,
      maxBatchSize: 10,
      closeStores: false,
      random: Math.random,
    })
    createTable<Foo>({ lease: true })
    expectTypeOf<keyof TableOptions>().toEqualTypeOf<
      | 'name'
      | 'ttl'
      | 'jitter'
      | 'capacity'
      | 'maxSize'
      | 'sizeOf'
      | 'sweepInterval'
      | 'negativeTtl'
      | 'loadTimeout'
      | 'coalesce'
      | 'grace'
      | 'staleWhileRevalidate'
      | 'graceBackoff'
      | 'softTimeout'
      | 'lease'
      | 'l2'
      | 'bus'
      | 'loader'
      | 'batchLoader'
      | 'maxBatchSize'
      | 'closeStores'
      | 'clock'
      | 'random'
      | 'inspect'
    >()
    // @ts-expect-error a typo inside lease
    createTable<Foo>({ lease: { tll: 100 } })
    // @ts-expect-error sizeOf answers a number
    createTable<Foo>({ maxSize: 10, sizeOf: () => '1' })
  })
})

describe('loader contexts', () => {
  test("a loader's context: signal, setVersion(n), setTtl(ms), setTags(tags)", () => {
    expectTypeOf<LoaderContext['setTags']>().toEqualTypeOf<(tags: readonly string[]) => void>()
    expectTypeOf<LoaderContext['setTtl']>().toEqualTypeOf<(ms: number) => void>()
    expectTypeOf<LoaderContext['setVersion']>().toEqualTypeOf<(version: number) => void>()
    expectTypeOf<keyof LoaderContext>().toEqualTypeOf<'signal' | 'setVersion' | 'setTtl' | 'setTags'>()
  })

  test("a batch loader's context names the id, in the table's id type", () => {
    expectTypeOf<BatchLoaderContext<number>['setTags']>().toEqualTypeOf<(id: number, tags: readonly string[]) => void>()
    expectTypeOf<keyof BatchLoaderContext>().toEqualTypeOf<'signal' | 'setVersion' | 'setTtl' | 'setTags'>()
  })
})

describe('events', () => {
  test('the nine events the README names, and their payloads', () => {
    expectTypeOf<keyof TableEvents>().toEqualTypeOf<'load' | 'fill' | 'error' | 'stale' | 'sweep' | 'l2_error' | 'coherence' | 'gap' | 'clear'>()
    expectTypeOf<TableEvents['load']>().toEqualTypeOf<{ table: string; id: Id }>()
    expectTypeOf<TableEvents['fill']['source']>().toEqualTypeOf<'loader' | 'l2'>()
    expectTypeOf<TableEvents['stale']['reason']>().toEqualTypeOf<'swr' | 'failsafe' | 'backoff' | 'soft'>()
    expectTypeOf<TableEvents['stale']['staleness']>().toEqualTypeOf<number>()
    expectTypeOf<TableEvents['coherence']['kind']>().toEqualTypeOf<'put' | 'invalidate'>()
    expectTypeOf<TableEvents['l2_error']['id']>().toEqualTypeOf<Id | undefined>()
    expectTypeOf<TableEvents['clear']>().toEqualTypeOf<{ table: string; dropped: number; remote: boolean }>()
    expectTypeOf<TableEvents['gap']>().toEqualTypeOf<{ table: string; dropped: number }>()
  })
})

describe('errors', () => {
  test('each README error carries its code as a literal, and the properties the README says', () => {
    expectTypeOf<TableClosedError['code']>().toEqualTypeOf<'ECHOSTORE_TABLE_CLOSED'>()
    expectTypeOf<FetchTimeoutError['code']>().toEqualTypeOf<'ECHOSTORE_FETCH_TIMEOUT'>()
    expectTypeOf<LoadTimeoutError['code']>().toEqualTypeOf<'ECHOSTORE_LOAD_TIMEOUT'>()
    expectTypeOf<L2TimeoutError['code']>().toEqualTypeOf<'ECHOSTORE_L2_TIMEOUT'>()
    expectTypeOf<MissingPeerDependencyError['code']>().toEqualTypeOf<'ECHOSTORE_PEER_MISSING'>()
    expectTypeOf<TableClosedError>().toExtend<TableError>()
    expectTypeOf<TableError>().toExtend<EchoStoreError>()
    expectTypeOf<EchoStoreError['code']>().toEqualTypeOf<string>()
    expectTypeOf<TableError['table']>().toEqualTypeOf<string>()
    expectTypeOf<TableError['id']>().toEqualTypeOf<Id | undefined>()
    expectTypeOf<FetchTimeoutError['timeout']>().toEqualTypeOf<number>()
    expectTypeOf<LoadTimeoutError['loadTimeout']>().toEqualTypeOf<number>()
    expectTypeOf<LoadTimeoutError['bound']>().toEqualTypeOf<number>()
    expectTypeOf<L2CorruptEntryError['key']>().toEqualTypeOf<string>()
    expectTypeOf<L2UnfitValueError['reason']>().toEqualTypeOf<'size' | 'codec'>()
    expectTypeOf<RedisUnreachableError['host']>().toEqualTypeOf<string>()
    expectTypeOf<MissingPeerDependencyError['dependency']>().toEqualTypeOf<string>()
    expectTypeOf<MissingPeerDependencyError['entry']>().toEqualTypeOf<string>()
  })
})

describe('counters', () => {
  test('COUNTER_NAMES is a readonly tuple of CounterName; every README counter is a key of Stats', () => {
    expectTypeOf(COUNTER_NAMES).toExtend<readonly CounterName[]>()
    expectTypeOf<'coh_foreign' | 'tag_stale' | 'tag_invalidations' | 'batch_loads' | 'batch_ids' | 'lease_lost' | 'heavy_skips'>().toExtend<CounterName>()
    expectTypeOf<Stats['weight']>().toEqualTypeOf<number>()
  })
})
