/**
 * Namespaces: `table.namespace(name)` is a view with a key space of its own on the same owner,
 * rows, L2 and bus. Ids never collide across the base table, namespaces and nested namespaces in
 * any layer; a namespace's `clear()` drops its rows only (nested ones included), in every process;
 * the base table's `clear()` and `invalidateTags` reach every namespace, a namespace's
 * `invalidateTags` only its own rows; loaders are asked with the caller's ids; `stats()` are the
 * table's; closing a view closes nothing shared. Two tables on one memoryL2 and one localBus stand
 * in for two processes.
 */
import { describe, expect, it } from 'vitest'
import { type BatchLoader, type Id, type LoaderContext, type Table, type TableOptions, SelfFetchError, TableClosedError, createTable, localBus, memoryL2 } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { MAX_ID_LENGTH } from '../src/limits.js'
import { MAX_NAMESPACE_LENGTH } from '../src/core/id.js'
import { latchedBatchLoader, outcome, settle } from './support/latch.js'

const TTL = 60_000
type V = string | undefined

function twoProcesses(options: Partial<TableOptions<V, Id>> = {}) {
  const clock = manualClock(0)
  const l2 = memoryL2({ clock })
  const bus = localBus()
  /** A table on the shared L2, on the bus unless `alone`. */
  const make = (alone = false): Table<V, Id> => createTable<V, Id>({ name: 'ns', ttl: TTL, jitter: 0, sweepInterval: 1e9, clock, l2, bus: alone ? undefined : bus, ...options })
  return { clock, l2, make, here: make(), there: make() }
}

/** A loader that answers `value`, with `tags` when given. */
const answer =
  (value: string, tags?: string[]) =>
  async (_id: Id, context: LoaderContext): Promise<V> => {
    if (tags !== undefined) context.setTags(tags)
    return value
  }
/** A loader that must not be called: the read is a hit, or L2 answers. */
const never = async (id: Id): Promise<V> => {
  throw new Error(`the loader was called for ${String(id)}`)
}

/** The base table and its views, the same way in any table. */
function views(table: Table<V, Id>) {
  const a = table.namespace('a')
  return { base: table, a, b: table.namespace('b'), ab: a.namespace('b'), ba: table.namespace('b').namespace('a'), quoted: table.namespace('["a"]') }
}

describe('namespace ids', () => {
  it('never collide across the base table, namespaces and nested namespaces, in L1 and in L2', async () => {
    const { here, make } = twoProcesses()
    const mine = views(here)
    for (const [name, view] of Object.entries(mine)) {
      await view.put('x', `${name}:x`)
      await view.fetch(1, answer(`${name}:1`))
      await view.fetch('1', answer(`${name}:"1"`))
    }
    const cold = views(make(true))
    for (const [name, view] of Object.entries(mine)) {
      expect([view.peek('x'), view.peek(1), view.peek('1')]).toEqual([`${name}:x`, `${name}:1`, `${name}:"1"`])
      const theirs = cold[name as keyof typeof cold]
      expect([await theirs.fetch('x', never), await theirs.fetch(1, never), await theirs.fetch('1', never)]).toEqual([`${name}:x`, `${name}:1`, `${name}:"1"`])
    }
    expect(here.size).toBe(18)
    expect(cold.base.stats()).toMatchObject({ l2_hits: 18, loads: 0 })
    await Promise.all([here.close(), cold.base.close()])
  })

  it('refuses ids that start with U+DC00 on the base table (no caller reaches a namespace key), naming the call', async () => {
    const { here } = twoProcesses()
    const marked = '\uDC00["a","x"]'
    await here.namespace('a').put('x', 'in a')
    await expect(here.fetch(marked, never)).rejects.toThrow(/fetch id must not start with U\+DC00/)
    await expect(here.fetch(marked, never)).rejects.toBeInstanceOf(TypeError)
    await expect(here.put(marked, 'v')).rejects.toThrow(/put id must not start with U\+DC00/)
    await expect(here.invalidate(marked)).rejects.toThrow(/invalidate id must not start with U\+DC00/)
    expect(() => here.peek(marked)).toThrow(/peek id must not start with U\+DC00/)
    expect(() => here.has(marked)).toThrow(/has id must not start with U\+DC00/)
    await expect(here.fetchMany(['ok', marked], async () => [])).rejects.toThrow(/fetchMany: ids\[1\] id must not start with U\+DC00/)
    await expect(here.namespace('a').fetch(marked, never)).rejects.toThrow(/U\+DC00/)
    expect(await here.namespace('a').fetch('x', never)).toBe('in a')
    expect(await here.fetch('x\uDC00', answer('a lone surrogate inside is an id'))).toBe('a lone surrogate inside is an id')
    await here.close()
  })

  it('takes every id the table takes, at the length limit and of characters JSON escapes, through L1, L2 and the bus', async () => {
    const { here, there, make } = twoProcesses()
    const ids = ['x'.repeat(MAX_ID_LENGTH), '"'.repeat(9_000), '\\'.repeat(9_000), '\u0001'.repeat(MAX_ID_LENGTH)]
    // The deepest namespace of the longest names, each of characters JSON writes in 6 bytes: the longest keys there are.
    const deep = (table: Table<V, Id>) => ['\u0001', '\u0002', '\u0003', '\u0004'].reduce((view, unit) => view.namespace(unit.repeat(MAX_NAMESPACE_LENGTH)), table)
    for (const [name, view] of [
      ['acme', here.namespace('acme')],
      ['deep', deep(here)],
    ] as const) {
      for (const [i, id] of ids.entries()) {
        expect(await view.fetch(id, answer(`${name} ${i} loaded`))).toBe(`${name} ${i} loaded`)
        expect(await view.put(id, `${name} ${i} put`)).toMatchObject({ applied: true, l2: 'written', broadcast: true })
        expect([view.peek(id), view.has(id)]).toEqual([`${name} ${i} put`, true])
        expect(await view.fetchMany([id], async () => ['never'])).toEqual([`${name} ${i} put`])
      }
    }
    await settle()
    expect(there.stats()).toMatchObject({ coh_applied: 2 * ids.length, coh_invalid: 0 })
    const cold = make(true)
    for (const id of ids) expect(await cold.namespace('acme').fetch(id, never)).toMatch(/^acme \d put$/)
    for (const id of ids) expect(await deep(cold).fetch(id, never)).toMatch(/^deep \d put$/)
    for (const id of ids) expect(await here.namespace('acme').invalidate(id)).toMatchObject({ applied: true, l2: 'written', broadcast: true })
    expect(here.namespace('acme').has(ids[0]!)).toBe(false)
    await Promise.all([here.close(), there.close(), cold.close()])
  })

  it('names the caller\u2019s id, never its key, when it refuses an id or an option', async () => {
    const { here } = twoProcesses()
    const acme = here.namespace('acme')
    const refusals = [
      await acme.fetch('x'.repeat(MAX_ID_LENGTH + 1), never).catch((e: unknown) => e),
      await acme.put('x'.repeat(MAX_ID_LENGTH + 1), 'v').catch((e: unknown) => e),
      await acme.fetch('x', never, { timeout: -1 }).catch((e: unknown) => e),
      await acme.fetch('x', 'no loader' as never).catch((e: unknown) => e),
      await acme.put('x', 'v', { ttl: -1 }).catch((e: unknown) => e),
      await acme.invalidate('x', { version: -1 }).catch((e: unknown) => e),
    ]
    const messages = refusals.map((error) => (error as Error).message)
    expect(messages[0]).toMatch(/fetch id is longer than 16384 characters \(got 16385\)/)
    expect(messages[1]).toMatch(/put id is longer than 16384 characters \(got 16385\)/)
    expect(messages.slice(2)).toEqual([
      expect.stringMatching(/fetch\("x"\) option "timeout"/),
      expect.stringMatching(/fetch\("x"\) needs a loader function/),
      expect.stringMatching(/put\("x"\) option "ttl"/),
      expect.stringMatching(/invalidate\("x"\) option "version"/),
    ])
    for (const message of messages) expect(message).not.toMatch(/\uDC00|acme/)
    const closing = here.namespace('acme')
    await here.close()
    const closedRefusals = [
      await closing.fetch('x', never).catch((e: unknown) => e),
      await closing.fetch('x', never, { timeout: 5 }).catch((e: unknown) => e),
      await closing.put('x', 'v').catch((e: unknown) => e),
      await closing.invalidate('x').catch((e: unknown) => e),
    ]
    for (const refused of closedRefusals) {
      expect(refused).toBeInstanceOf(TableClosedError)
      expect((refused as TableClosedError).id).toBe('x')
      expect((refused as Error).message).not.toMatch(/\uDC00|acme/)
    }
  })

  it('names the caller\u2019s id when it refuses a data version below a minted one: a put, an invalidate, a loader\u2019s setVersion', async () => {
    for (const shared of [false, true]) {
      const clock = manualClock(1_700_000_000_000)
      const table = createTable<string>({ name: 'acct', clock, ...(shared ? { l2: memoryL2({ clock }) } : {}) })
      const acme = table.namespace('acme')
      await acme.invalidate('user-7') // a minted (clock) version: a data version below it is refused
      const refusals = [
        await acme.put('user-7', 'v', { version: 5 }).catch((e: unknown) => e),
        await acme.invalidate('user-7', { version: 5 }).catch((e: unknown) => e),
        await acme.fetch('user-7', (_id, { setVersion }) => (setVersion(5), 'v')).catch((e: unknown) => e),
      ]
      expect(refusals.map((error) => (error as Error).message)).toEqual([
        expect.stringMatching(/^echostore: put\("user-7"\): version 5 is the data's own/),
        expect.stringMatching(/^echostore: invalidate\("user-7"\): version 5 is the data's own/),
        expect.stringMatching(/^echostore: the loader of "user-7": setVersion: version 5 is the data's own/),
      ])
      await table.close()
    }
  })

  it('names the caller\u2019s id in the SelfFetchError of a loader that fetches its own id', async () => {
    const { here } = twoProcesses()
    const acme = here.namespace('acme')
    const error = await acme.fetch('x', () => acme.fetch('x', async () => 'inner')).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(SelfFetchError)
    expect((error as SelfFetchError).id).toBe('x')
    expect((error as Error).message).toContain('the loader of "x"')
    expect((error as Error).message).not.toMatch(/\uDC00|acme/)
    await here.close()
  })

  it('refuses a bad namespace name, and nesting deeper than four', async () => {
    const { here } = twoProcesses()
    expect(() => here.namespace('')).toThrow(/namespace\(name\) takes a non-empty string/)
    expect(() => here.namespace(7 as never)).toThrow(TypeError)
    expect(() => here.namespace('x'.repeat(257))).toThrow(/at most 256 characters/)
    const deep = here.namespace('1').namespace('2').namespace('3').namespace('4')
    expect(() => deep.namespace('5')).toThrow(RangeError)
    expect(() => deep.namespace('5')).toThrow(/namespaces nest at most 4 deep/)
    await deep.put('x', 'four deep')
    expect(deep.peek('x')).toBe('four deep')
    await here.close()
  })
})

describe('a namespace clear()', () => {
  it('drops its rows and its nested namespaces\u2019 rows only, here, in the other table (bus) and for a cold table (L2)', async () => {
    const { here, there, make } = twoProcesses()
    const mine = views(here)
    const theirs = views(there)
    for (const [name, view] of Object.entries(mine)) await view.fetch('x', answer(name))
    for (const [name, view] of Object.entries(theirs)) expect(await view.fetch('x', never)).toBe(name) // from L2
    const result = await mine.a.clear()
    expect(result).toEqual({ l2: 'cleared', broadcast: true })
    await settle()
    const has = (set: ReturnType<typeof views>) => Object.fromEntries(Object.entries(set).map(([name, view]) => [name, view.has('x')]))
    const expected = { base: true, a: false, b: true, ab: false, ba: true, quoted: true }
    expect(has(mine)).toEqual(expected)
    expect(has(theirs)).toEqual(expected)
    const cold = views(make(true))
    for (const [name, view] of Object.entries(cold)) {
      const gone = !expected[name as keyof typeof expected]
      expect(await view.fetch('x', gone ? answer(`${name} again`) : never)).toBe(gone ? `${name} again` : name)
    }
    // A namespace clear counts one tag invalidation (its mark), here and where the bus delivered it; no clear of the table.
    expect(here.stats()).toMatchObject({ clears: 0, tag_invalidations: 1 })
    expect(there.stats()).toMatchObject({ clears: 0, tag_invalidations: 1 })
    await Promise.all([here.close(), there.close(), cold.base.close()])
  })

  it('is O(1) in L2: later rows of the namespace are fresh, and the namespace works on', async () => {
    const { here, make } = twoProcesses()
    const a = here.namespace('a')
    await a.fetch('x', answer('before'))
    await a.clear()
    expect(await a.fetch('x', answer('after'))).toBe('after')
    expect(await make(true).namespace('a').fetch('x', never)).toBe('after')
    await a.put('y', 'put after')
    expect(a.peek('y')).toBe('put after')
    await here.close()
  })
})

describe('the base table reaches every namespace', () => {
  it('clear() drops every namespace\u2019s rows, in both tables and in L2', async () => {
    const { here, there, make } = twoProcesses()
    const mine = views(here)
    for (const [name, view] of Object.entries(mine)) await view.fetch('x', answer(name))
    const theirs = views(there)
    for (const view of Object.values(theirs)) await view.fetch('x', never)
    await here.clear()
    await settle()
    for (const set of [mine, theirs]) for (const view of Object.values(set)) expect(view.has('x')).toBe(false)
    const cold = views(make(true))
    for (const [name, view] of Object.entries(cold)) expect(await view.fetch('x', answer(`${name} again`))).toBe(`${name} again`)
    await Promise.all([here.close(), there.close(), cold.base.close()])
  })

  it('invalidateTags(tags) reaches the tag in every namespace, while a namespace\u2019s invalidateTags reaches its own rows (and nested ones) only', async () => {
    const { here, there, make } = twoProcesses()
    const mine = views(here)
    for (const [name, view] of Object.entries(mine)) {
      await view.fetch('t', answer(`${name}:t`, ['t']))
      await view.fetch('u', answer(`${name}:u`, ['u']))
    }
    const theirs = views(there)
    for (const view of Object.values(theirs)) {
      await view.fetch('t', never)
      await view.fetch('u', never)
    }
    await mine.a.invalidateTags(['t']) // the namespace a, and a/b in it
    await settle()
    const seen = (set: ReturnType<typeof views>, id: string) => Object.fromEntries(Object.entries(set).map(([name, view]) => [name, view.has(id)]))
    const scoped = { base: true, a: false, b: true, ab: false, ba: true, quoted: true }
    expect(seen(mine, 't')).toEqual(scoped)
    expect(seen(theirs, 't')).toEqual(scoped)
    const cold = views(make(true))
    for (const [name, view] of Object.entries(cold)) {
      const gone = !scoped[name as keyof typeof scoped]
      expect(await view.fetch('t', gone ? answer(`${name}:t2`, ['t']) : never)).toBe(gone ? `${name}:t2` : `${name}:t`)
    }
    await here.invalidateTags(['u'])
    await settle()
    const none = { base: false, a: false, b: false, ab: false, ba: false, quoted: false }
    expect(seen(mine, 'u')).toEqual(none)
    expect(seen(theirs, 'u')).toEqual(none)
    for (const [name, view] of Object.entries(views(make(true)))) expect(await view.fetch('u', answer(`${name}:u2`))).toBe(`${name}:u2`)
    await Promise.all([here.close(), there.close(), cold.base.close()])
  })
})

describe('namespace loaders', () => {
  it('fetch asks the loader with the caller\u2019s id', async () => {
    const { here } = twoProcesses()
    const asked: Id[] = []
    const loader = async (id: Id): Promise<V> => {
      asked.push(id)
      return `loaded ${String(id)}`
    }
    expect(await here.namespace('a').fetch('x', loader)).toBe('loaded x')
    expect(await here.namespace('a').namespace('b').fetch(2, loader)).toBe('loaded 2')
    expect(asked).toEqual(['x', 2])
    await here.close()
  })

  it('get and getMany with the table loader ask it with the caller\u2019s ids', async () => {
    const asked: Id[] = []
    const { here } = twoProcesses({
      loader: async (id, context) => {
        asked.push(id)
        if (id === 'short') context.setTtl(0)
        if (id === 'tagged') context.setTags(['t'])
        return `loaded ${String(id)}`
      },
    })
    const a = here.namespace('a')
    expect(await a.get('x')).toBe('loaded x')
    expect(await a.getMany(['y', 'short', 'tagged'])).toEqual(['loaded y', 'loaded short', 'loaded tagged'])
    expect(asked).toEqual(['x', 'y', 'short', 'tagged'])
    expect([a.has('x'), a.has('short'), a.has('tagged'), here.has('x')]).toEqual([true, false, true, false])
    await a.invalidateTags(['t'])
    expect(a.has('tagged')).toBe(false)
    await here.close()
  })

  it('getMany with the table batch loader: the callers\u2019 ids, a Map answer keyed by them, setTtl, setTags and setVersion by them', async () => {
    const origin = latchedBatchLoader<V>()
    const { here, l2 } = twoProcesses({ batchLoader: origin.loader })
    const a = here.namespace('a')
    await here.put('x', 'base x')
    const read = outcome(a.getMany(['x', 'y', 'z']))
    await settle()
    const call = origin.only()
    expect(call.ids).toEqual(['x', 'y', 'z'])
    call.context.setTtl('z', 0)
    call.context.setTags('y', ['t'])
    call.context.setVersion('x', 12)
    expect(() => call.context.setTags('w', ['t'])).toThrow(/"w" is not one of this call's ids/)
    expect(() => call.context.setVersion('w', 1)).toThrow(/"w" is not one of this call's ids/)
    call.resolve(
      new Map<Id, V>([
        ['x', 'a x'],
        ['y', 'a y'],
        ['z', 'a z'],
      ]),
    )
    await settle()
    expect(read.value).toEqual(['a x', 'a y', 'a z'])
    expect([a.peek('x'), a.peek('y'), a.has('z'), here.peek('x')]).toEqual(['a x', 'a y', false, 'base x'])
    expect(await l2.get('ns', '\uDC00["a","x"]')).toMatchObject({ value: 'a x', version: 12 })
    await a.invalidateTags(['t'])
    expect([a.has('x'), a.has('y')]).toEqual([true, false])
    expect(await a.get('x')).toBe('a x') // a hit
    const single = outcome(a.get('w'))
    await settle()
    expect(origin.calls[1]!.ids).toEqual(['w'])
    origin.calls[1]!.resolve(new Map<Id, V>([['w', 'a w']]))
    await settle()
    expect([single.value, here.has('w')]).toEqual(['a w', false])
    await here.close()
  })

  it('fetchMany with a batch loader: the callers\u2019 ids, a Map answer keyed by them, in one call per turn', async () => {
    const { here } = twoProcesses()
    const a = here.namespace('a')
    const calls: Id[][] = []
    const batch: BatchLoader<V, Id> = async (ids, context) => {
      calls.push(ids)
      for (const id of ids) context.setTags(id, [`tag-${String(id)}`])
      return new Map(ids.map((id) => [id, `a ${String(id)}`]))
    }
    const [first, second] = await Promise.all([a.fetchMany(['x', 1], batch), a.fetchMany(['y'], batch)])
    expect([first, second]).toEqual([['a x', 'a 1'], ['a y']])
    expect(calls).toEqual([['x', 1, 'y']])
    await a.invalidateTags(['tag-1'])
    expect([a.has('x'), a.has(1), a.has('y')]).toEqual([true, false, true])
    await here.close()
  })
})

describe('a namespace view', () => {
  it('shares the table\u2019s stats', async () => {
    const { here } = twoProcesses()
    const a = here.namespace('a')
    await a.fetch('x', answer('x'))
    await a.fetch('x', never)
    await here.fetch('x', answer('base'))
    expect(a.stats()).toEqual(here.stats())
    expect(here.namespace('b').stats()).toMatchObject({ hits: 1, misses: 2, loads: 2, size: 2 })
    expect(a.size).toBe(2)
    await here.close()
  })

  it('closes nothing shared: the closed view rejects with TableClosedError, the table and other views go on', async () => {
    const { here, there } = twoProcesses()
    const a = here.namespace('a')
    await a.fetch('x', answer('x'))
    await a.close()
    await a.close() // idempotent
    await expect(a.fetch('x', never)).rejects.toBeInstanceOf(TableClosedError)
    await expect(a.put('x', 'v')).rejects.toBeInstanceOf(TableClosedError)
    await expect(a.invalidate('x')).rejects.toBeInstanceOf(TableClosedError)
    await expect(a.invalidateTags(['t'])).rejects.toBeInstanceOf(TableClosedError)
    await expect(a.clear()).rejects.toBeInstanceOf(TableClosedError)
    await expect(a.getMany(['x'])).rejects.toThrow() // no table loader: refused either way
    await expect(a.fetchMany(['x'], async () => [])).rejects.toBeInstanceOf(TableClosedError)
    expect(() => a.peek('x')).toThrow(TableClosedError)
    expect(() => a.has('x')).toThrow(TableClosedError)
    expect(() => a.namespace('b')).toThrow(TableClosedError)
    expect(await here.namespace('a').fetch('x', never)).toBe('x') // the rows stay
    await here.put('y', 'base y')
    await settle()
    expect(await there.fetch('y', answer('there y'))).toBe('base y') // from L2, after the put
    const b = here.namespace('b')
    await here.close()
    await expect(b.fetch('x', never)).rejects.toBeInstanceOf(TableClosedError) // the base closed: its views with it
    expect(() => here.namespace('c')).toThrow(TableClosedError)
    await there.close()
  })
})
