/**
 * Batch loads: `fetchMany`, and `get`/`getMany` through a table's own `loader` or `batchLoader`. The
 * misses of one owner turn go to the origin as one batch call, per id coalesced with every other
 * kind of read, and each id behaves as it would under `fetch` (grace, deadlines, fencing, L2).
 */
import { describe, expect, it } from 'vitest'
import { FetchTimeoutError, type Id, SelfFetchError, TableClosedError, createTable, memoryL2 } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { latchedBatchLoader, latchedLoader, outcome, settle } from './support/latch.js'

type Row = { id: Id } | undefined

/** A table of rows on a manual clock, without jitter or sweeps. */
function rows(options: Record<string, unknown> = {}) {
  const clock = manualClock(0)
  const table = createTable<Row, Id>({ name: 'rows', ttl: 10_000, jitter: 0, sweepInterval: 1e9, clock, ...options })
  return { clock, table }
}

const rowOf = (id: Id): Row => ({ id })

describe('fetchMany', () => {
  it('answers in the order of ids, in one batch call for the misses; hits and repeated ids are not asked again', async () => {
    const { table } = rows()
    await table.fetch('b', () => rowOf('b'))
    const origin = latchedBatchLoader<Row>()
    const page = table.fetchMany(['a', 'b', 'c', 'a'], origin.loader)
    await settle()
    expect(origin.only().ids).toEqual(['a', 'c'])
    origin.only().resolve([rowOf('a'), rowOf('c')])
    const [a, b, c, again] = await page
    expect([a, b, c, again]).toEqual([rowOf('a'), rowOf('b'), rowOf('c'), rowOf('a')])
    expect(again).toBe(a)
    expect(table.stats()).toMatchObject({ hits: 1, misses: 4, flights: 3, coalesced: 1, loads: 3, batch_loads: 1, batch_ids: 2, fills: 3 })
    await table.close()
  })

  it('a Map answers by id; an id missing from it answers undefined and is cached as a negative row', async () => {
    const { table } = rows()
    const page = await table.fetchMany(['a', 'gone'], (ids) => new Map(ids.filter((id) => id !== 'gone').map((id) => [id, rowOf(id)])))
    expect(page).toEqual([rowOf('a'), undefined])
    expect(table.has('gone')).toBe(true)
    expect(table.peek('gone')).toBeUndefined()
    await table.close()
  })

  it('a Map’s ids nobody asked for are dropped: not stored in L1 nor L2, and a read of one asks the origin for it', async () => {
    const l2 = memoryL2()
    const { table } = rows({ l2 })
    const extra = () =>
      new Map<Id, Row>([
        ['a', rowOf('a')],
        ['extra', rowOf('extra')],
      ])
    expect(await table.fetchMany(['a'], extra)).toEqual([rowOf('a')])
    expect(table.has('extra')).toBe(false)
    expect(await l2.get('rows', 'extra')).toBeUndefined()
    expect(table.stats()).toMatchObject({ fills: 1, loads: 1 })
    const asked: Id[][] = []
    expect(await table.fetchMany(['extra'], (ids) => (asked.push(ids), ids.map(rowOf)))).toEqual([rowOf('extra')])
    expect(asked).toEqual([['extra']])
    await table.close()
  })

  it('an Error in an id’s place fails that id alone: fetchMany rejects with the first failed id’s error, the others are stored', async () => {
    const { table } = rows()
    const first = new Error('a is broken')
    const second = new Error('c is broken')
    await expect(table.fetchMany(['a', 'b', 'c'], () => [first, rowOf('b'), second])).rejects.toBe(first)
    expect(table.peek('b')).toEqual(rowOf('b'))
    expect(table.has('a')).toBe(false)
    expect(table.stats()).toMatchObject({ load_errors: 2, fills: 1 })
    const settled = await Promise.allSettled(['a', 'b'].map((id) => table.fetch(id, () => rowOf(`${id}!`))))
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled'])
    await table.close()
  })

  it('an array of the wrong length fails every id with a TypeError saying so; a thrown or rejected batch fails every id with that error', async () => {
    const { table } = rows()
    await expect(table.fetchMany(['a', 'b'], () => [rowOf('a')])).rejects.toThrow(/answered an array of 1 entries for 2 ids/)
    await expect(table.fetchMany(['a', 'b'], () => 42 as never)).rejects.toThrow(/answer an array .* or a Map/)
    const thrown = new Error('bulk endpoint down')
    await expect(
      table.fetchMany(['a', 'b'], () => {
        throw thrown
      }),
    ).rejects.toBe(thrown)
    await expect(table.fetchMany(['a', 'b'], () => Promise.reject(thrown))).rejects.toBe(thrown)
    expect(table.stats()).toMatchObject({ load_errors: 8, fills: 0, inflight: 0 })
    await table.close()
  })

  it('an array with holes answers undefined (absent) for each hole, as an entry of undefined does, with or without L2', async () => {
    // The DataLoader-style answer: an array of the right length, filled at the index of each row the origin had.
    const byIndex = (ids: Id[]) => {
      const out = new Array<Row>(ids.length)
      for (const id of ids.filter((id) => id !== 'gone')) out[ids.indexOf(id)] = rowOf(id)
      return out
    }
    for (const l2 of [undefined, memoryL2()]) {
      const { table } = rows({ l2 })
      expect(await table.fetchMany(['a', 'gone', 'c'], byIndex)).toEqual([rowOf('a'), undefined, rowOf('c')])
      expect(table.has('gone')).toBe(true)
      expect(table.peek('gone')).toBeUndefined()
      expect(table.stats()).toMatchObject({ load_errors: 0, fills: 3, inflight: 0 })
      await table.close()
    }
  })

  it('coalesces per id with every kind of read: a fetch of an id in a running batch joins it, and a batch joins an id already in flight', async () => {
    const { table } = rows()
    const single = latchedLoader<Row>()
    const inFlight = table.fetch('a', single.loader)
    await settle()
    const origin = latchedBatchLoader<Row>()
    const page = table.fetchMany(['a', 'b'], origin.loader)
    const joiner = table.fetch('b', () => rowOf('never asked'))
    await settle()
    expect(origin.only().ids).toEqual(['b'])
    origin.only().resolve([rowOf('b')])
    single.only().resolve(rowOf('a'))
    expect(await page).toEqual([rowOf('a'), rowOf('b')])
    expect(await joiner).toBe((await page)[1])
    expect(await inFlight).toBe((await page)[0])
    expect(table.stats()).toMatchObject({ misses: 4, flights: 2, coalesced: 2, loads: 2 })
    await table.close()
  })

  it('reads of one turn with the same batch loader share one call; another batch loader gets its own', async () => {
    const { table } = rows()
    const origin = latchedBatchLoader<Row>()
    const other = latchedBatchLoader<Row>()
    const pages = [table.fetchMany(['a', 'b'], origin.loader), table.fetchMany(['c'], origin.loader), table.fetchMany(['d'], other.loader)]
    await settle()
    expect(origin.only().ids).toEqual(['a', 'b', 'c'])
    expect(other.only().ids).toEqual(['d'])
    origin.only().resolve(
      new Map([
        ['a', rowOf('a')],
        ['b', rowOf('b')],
        ['c', rowOf('c')],
      ]),
    )
    other.only().resolve([rowOf('d')])
    expect(await Promise.all(pages)).toEqual([[rowOf('a'), rowOf('b')], [rowOf('c')], [rowOf('d')]])
    await table.close()
  })

  it('splits a batch at maxBatchSize', async () => {
    const { table } = rows({ maxBatchSize: 100 })
    const sizes: number[] = []
    const ids = Array.from({ length: 250 }, (_, i) => i)
    const page = await table.fetchMany(ids, (asked) => (sizes.push(asked.length), asked.map(rowOf)))
    expect(sizes).toEqual([100, 100, 50])
    expect(page).toEqual(ids.map(rowOf))
    expect(table.stats()).toMatchObject({ batch_loads: 3, batch_ids: 250, loads: 250 })
    await table.close()
  })

  it('asks the batch loader only for what L2 lacks, reading L2 in one round trip; its answers are written to L2', async () => {
    const l2 = memoryL2()
    let getMany = 0
    const counted = Object.assign(Object.create(l2) as typeof l2, { getMany: (...args: Parameters<typeof l2.getMany>) => (getMany++, l2.getMany(...args)) })
    const writer = createTable<Row>({ name: 'rows', l2: counted })
    await writer.fetch('a', () => rowOf('a'))
    const { table } = rows({ l2: counted })
    const asked: Id[][] = []
    expect(await table.fetchMany(['a', 'b', 'c'], (ids) => (asked.push(ids), ids.map(rowOf)))).toEqual([rowOf('a'), rowOf('b'), rowOf('c')])
    expect(asked).toEqual([['b', 'c']])
    expect(getMany).toBe(1)
    expect(table.stats()).toMatchObject({ l2_hits: 1, loads: 2 })
    const reader = createTable<Row>({ name: 'rows', l2: counted })
    expect(await reader.fetch('c', () => rowOf('not asked'))).toEqual(rowOf('c'))
    expect(reader.stats()).toMatchObject({ l2_hits: 1, loads: 0 })
    await Promise.all([writer.close(), table.close(), reader.close(), l2.close()])
  })

  it('the batch loader’s signal aborts once every waiter of every id left, not before', async () => {
    const { table } = rows()
    const origin = latchedBatchLoader<Row>()
    const first = new AbortController()
    const second = new AbortController()
    const a = outcome(table.fetchMany(['a'], origin.loader, { signal: first.signal }))
    const b = outcome(table.fetchMany(['b'], origin.loader, { signal: second.signal }))
    await settle()
    const { context } = origin.only()
    first.abort(new Error('left'))
    await settle()
    expect(a.state).toBe('rejected')
    expect(context.signal.aborted).toBe(false)
    second.abort(new Error('left too'))
    await settle()
    expect(b.state).toBe('rejected')
    expect(context.signal.aborted).toBe(true)
    expect(table.stats()).toMatchObject({ abandoned: 2, cancelled: 2, inflight: 0 })
    await table.close()
  })

  it('per-caller deadlines apply to each id: the caller leaves with FetchTimeoutError, the batch goes on and fills', async () => {
    const { clock, table } = rows()
    const origin = latchedBatchLoader<Row>()
    const page = outcome(table.fetchMany(['a', 'b'], origin.loader, { timeout: 50 }))
    await settle()
    clock.advance(50)
    await settle()
    expect(page.state).toBe('rejected')
    expect(page.error).toBeInstanceOf(FetchTimeoutError)
    origin.only().resolve([rowOf('a'), rowOf('b')])
    await settle()
    expect(table.peek('a')).toEqual(rowOf('a'))
    await table.close()
  })

  it('forceRefresh asks again for live rows; grace answers a failed batch from the graced rows', async () => {
    const { clock, table } = rows({ ttl: 1_000, grace: 10_000 })
    await table.fetchMany(['a', 'b'], (ids) => ids.map(rowOf))
    const asked: Id[][] = []
    const fresh = await table.fetchMany(['a', 'b'], (ids) => (asked.push(ids), ids.map((id) => ({ id: `${id}2` }))), { forceRefresh: true })
    expect(asked).toEqual([['a', 'b']])
    expect(fresh).toEqual([{ id: 'a2' }, { id: 'b2' }])
    clock.advance(1_500)
    expect(await table.fetchMany(['a', 'b'], () => Promise.reject(new Error('down')))).toEqual([{ id: 'a2' }, { id: 'b2' }])
    expect(table.stats()).toMatchObject({ failsafe: 2, stale_hits: 2 })
    await table.close()
  })

  it('a change during the batch fences its id: the waiters get the answer, the row is not stored', async () => {
    const { table } = rows()
    const origin = latchedBatchLoader<Row>()
    const page = table.fetchMany(['a', 'b'], origin.loader)
    await settle()
    await table.invalidate('a')
    origin.only().resolve([rowOf('a'), rowOf('b')])
    expect(await page).toEqual([rowOf('a'), rowOf('b')])
    expect(table.has('a')).toBe(false)
    expect(table.has('b')).toBe(true)
    expect(table.stats().fenced).toBe(1)
    await table.close()
  })

  it('setTtl(id, ms) sets one id’s lifetime; an id not in the call is refused inside the batch loader', async () => {
    const { clock, table } = rows()
    await table.fetchMany(['short', 'long'], (ids, { setTtl }) => (setTtl('short', 100), ids.map(rowOf)))
    clock.advance(200)
    expect(table.has('short')).toBe(false)
    expect(table.has('long')).toBe(true)
    await expect(table.fetchMany(['x'], (ids, { setTtl }) => (setTtl('y', 100), ids.map(rowOf)))).rejects.toThrow(/"y" is not one of this call's ids/)
    await table.close()
  })

  it('setVersion(id, n) reports one id’s version, as a loader’s setVersion does: the row and its L2 entry carry it, so a change below it is stale', async () => {
    const l2 = memoryL2()
    const { table } = rows({ l2 })
    await table.fetchMany(['a', 'b'], (ids, { setVersion }) => (setVersion('a', 3), setVersion('a', 42), ids.map(rowOf)))
    expect(await l2.get('rows', 'a')).toMatchObject({ kind: 'value', version: 42 })
    expect(await l2.get('rows', 'b')).toMatchObject({ kind: 'value', version: 0 }) // unreported: the version known when it started
    await table.invalidate('a', { version: 41 })
    await table.invalidate('b', { version: 41 })
    expect([table.has('a'), table.has('b')]).toEqual([true, false])
    await table.invalidate('a', { version: 43 })
    expect(table.has('a')).toBe(false)
    await table.close()
  })

  it('setVersion refuses, inside the batch loader, an id not in the call or a version that is not one, and works destructured', async () => {
    const { table } = rows()
    await expect(table.fetchMany(['x'], (ids, { setVersion }) => (setVersion('y', 1), ids.map(rowOf)))).rejects.toThrow(/setVersion\("y", n\): "y" is not one of this call's ids/)
    for (const bad of [-1, 1.5, Number.NaN, Number.MAX_SAFE_INTEGER + 1, '7' as unknown as number]) {
      await expect(table.fetchMany(['x'], (ids, { setVersion }) => (setVersion('x', bad), ids.map(rowOf)))).rejects.toThrow(/setVersion takes an integer/)
    }
    expect(table.stats()).toMatchObject({ fills: 0, inflight: 0 })
    await table.close()
  })

  it('a batch loader that fetches one of its own ids meets SelfFetchError', async () => {
    const { table } = rows()
    let inner: unknown
    await table.fetchMany(['a'], (ids) => {
      inner = table.fetch('a', () => rowOf('inner')).catch((error: unknown) => error)
      return ids.map(rowOf)
    })
    expect(await inner).toBeInstanceOf(SelfFetchError)
    await table.close()
  })

  it('refuses bad input naming it, and answers nothing for no ids', async () => {
    const { table } = rows()
    await expect(table.fetchMany('a' as never, () => [])).rejects.toThrow(/fetchMany\(ids\) takes an array of ids/)
    await expect(table.fetchMany(['a', true as never], () => [])).rejects.toThrow(/ids\[1\]/)
    await expect(table.fetchMany(['a'], 'loader' as never)).rejects.toThrow(/needs a batch loader function/)
    await expect(table.fetchMany(['a'], () => [], { timeout: -1 })).rejects.toThrow(/option "timeout"/)
    let called = false
    expect(await table.fetchMany([], () => ((called = true), []))).toEqual([])
    expect(called).toBe(false)
    await table.close()
    await expect(table.fetchMany(['a'], () => [])).rejects.toBeInstanceOf(TableClosedError)
  })
})

describe('get and getMany through the table’s own loader', () => {
  it('with batchLoader, every get of one turn goes to the origin as one call', async () => {
    const origin = latchedBatchLoader<Row>()
    const { table } = rows({ batchLoader: origin.loader })
    const reads = [table.get('a'), table.get('b'), table.getMany(['b', 'c'])]
    await settle()
    expect(origin.only().ids).toEqual(['a', 'b', 'c'])
    origin.only().resolve([rowOf('a'), rowOf('b'), rowOf('c')])
    expect(await Promise.all(reads)).toEqual([rowOf('a'), rowOf('b'), [rowOf('b'), rowOf('c')]])
    const partial = Promise.allSettled(['a', 'y', 'z'].map((id) => table.get(id)))
    await settle()
    expect(origin.calls[1]!.ids).toEqual(['y', 'z'])
    origin.calls[1]!.resolve([new Error('no y'), rowOf('z')])
    expect((await partial).map((p) => p.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    await table.close()
  })

  it('reads made any number of promise hops apart share one call, as DataLoader batches them; a read after the tick gets a call of its own', async () => {
    const origin = latchedBatchLoader<Row>()
    const { table } = rows({ batchLoader: origin.loader })
    const hops = async (n: number) => {
      for (let i = 0; i < n; i++) await Promise.resolve()
    }
    // Resolvers that await different depths before reading: an auth check, a parent field.
    const reads = ['a', 'b', 'c', 'd'].map(async (id, depth) => {
      await hops(depth * 3)
      return table.get(id)
    })
    const nested = (async () => table.getMany(await Promise.resolve(['b', 'e'])))()
    await settle()
    expect(origin.only().ids).toEqual(['a', 'b', 'e', 'c', 'd'])
    origin.only().resolve(new Map(origin.only().ids.map((id) => [id, rowOf(id)])))
    expect(await Promise.all(reads)).toEqual(['a', 'b', 'c', 'd'].map(rowOf))
    expect(await nested).toEqual([rowOf('b'), rowOf('e')])
    const later = table.get('f')
    await settle()
    expect(origin.calls.map((call) => call.ids)).toEqual([['a', 'b', 'e', 'c', 'd'], ['f']])
    origin.calls[1]!.resolve([rowOf('f')])
    expect(await later).toEqual(rowOf('f'))
    expect(table.stats()).toMatchObject({ batch_loads: 2, batch_ids: 6, fills: 6, inflight: 0 })
    await table.close()
  })

  it('a batch read released while its tick’s promise jobs run is not asked for', async () => {
    const origin = latchedBatchLoader<Row>()
    const { table } = rows({ batchLoader: origin.loader })
    const leaving = new AbortController()
    const left = outcome(table.fetchMany(['a'], origin.loader, { signal: leaving.signal }))
    const staying = table.get('b')
    await Promise.resolve()
    await Promise.resolve()
    leaving.abort(new Error('left'))
    await settle()
    expect(origin.only().ids).toEqual(['b'])
    expect(left.state).toBe('rejected')
    origin.only().resolve([rowOf('b')])
    expect(await staying).toEqual(rowOf('b'))
    expect(table.stats()).toMatchObject({ abandoned: 1, batch_ids: 1, inflight: 0 })
    await table.close()
  })

  it('with loader, get reads one id through it, and getMany one flight per id', async () => {
    const asked: Id[] = []
    const { table } = rows({ loader: (id: Id) => (asked.push(id), rowOf(id)) })
    expect(await table.get('a')).toEqual(rowOf('a'))
    expect(await table.getMany(['a', 'b', 'c'])).toEqual([rowOf('a'), rowOf('b'), rowOf('c')])
    expect(asked).toEqual(['a', 'b', 'c'])
    expect(table.stats().batch_loads).toBe(0)
    await table.close()
  })

  it('a table with neither rejects get with a TypeError that says what to do; both, or a bad one, are refused at construction', async () => {
    const { table } = rows()
    await expect(table.get('a')).rejects.toThrow(/get needs the table option "loader" or "batchLoader".*or read with fetch/)
    await expect(table.getMany(['a'])).rejects.toThrow(/getMany needs the table option/)
    expect(() => createTable({ loader: () => 1, batchLoader: () => [] })).toThrow(/option "loader" and "batchLoader" cannot both be set/)
    expect(() => createTable({ batchLoader: 7 as never })).toThrow(/option "batchLoader" must be a function/)
    expect(() => createTable({ maxBatchSize: 0 })).toThrow(/option "maxBatchSize" must be an integer in \[1, 100000\]/)
    await table.close()
  })
})

describe('put with a ttl', () => {
  it('a put chooses its row’s lifetime; 0 stores nothing; a bad ttl is refused naming the option', async () => {
    const { clock, table } = rows()
    await table.put('a', rowOf('a'), { ttl: 100 })
    expect(table.has('a')).toBe(true)
    clock.advance(150)
    expect(table.has('a')).toBe(false)
    await table.put('b', rowOf('b'), { ttl: 0 })
    expect(table.has('b')).toBe(false)
    await expect(table.put('c', rowOf('c'), { ttl: -1 })).rejects.toThrow(/put\("c"\) option "ttl" must be a number of ms/)
    await expect(table.invalidate('c', { ttl: 5 } as never)).rejects.toThrow(/ttl/)
    await table.close()
  })
})
