/**
 * The hostile part of the bad-input catalog: callers and collaborators that are valid by type but
 * misbehave. Signals whose members throw; loaders that throw what is not an `Error`, hand back
 * thenables that never settle, throw from `then` or settle twice, answer a value that is a throwing
 * `Proxy` or 64 MB, or change their own id; a loader left by both its waiters (one by abort, one by
 * its deadline); and, each on a table of its own, a custom L2 store that answers `null`, answers
 * synchronously, or answers an entry of an unknown kind, a version of 2^60 or a lifetime of
 * `Infinity`, a `random` that throws after construction, an `inspect` observer that throws, and a
 * loader that fetches its own id in the batch of another flight. Each entry resolves to a verdict:
 * `undefined` when the table kept its promises, else what it broke.
 */
import { FetchTimeoutError, type Id, LoadTimeoutError, type Loader, SelfFetchError, type TableOptions, createTable } from '../src/index.js'
import type { L2Store } from '../src/store.js'
import type { BadInput } from './bad-inputs.js'
import type { Row } from './origin.js'
import type { SoakTable } from './world.js'

/** What the hostile `inspect` observer throws: the one process warning the soak expects (see `Escapes`). */
export const EXPECTED_WARNING = 'soak: a hostile inspect observer'

/** What a waiter's signal aborts with in the two-waiter entry: counted as that caller's own cancellation. */
const LEFT = new Error('soak: the caller left')

const never = (): Promise<never> => new Promise<never>(() => {})
const throwingProxy = () =>
  new Proxy(
    {},
    {
      get() {
        throw new Error('hostile value: get')
      },
      ownKeys() {
        throw new Error('hostile value: ownKeys')
      },
      getPrototypeOf() {
        throw new Error('hostile value: getPrototypeOf')
      },
    },
  )

/** A genuine signal whose `member` throws when used. */
function signalWhose(member: 'aborted' | 'addEventListener'): AbortSignal {
  const signal = new AbortController().signal
  const thrower = () => {
    throw new Error(`hostile signal: ${member}`)
  }
  Object.defineProperty(signal, member, member === 'aborted' ? { get: thrower } : { value: thrower })
  return signal
}

/** Counts a fetch's outcome in the table's tally: timeouts and the caller's own cancellations are held against its counters. */
function counted(t: SoakTable, fetched: Promise<unknown>): Promise<unknown> {
  return fetched.catch((error: unknown) => {
    if (error instanceof FetchTimeoutError) t.tally.timedOut++
    else if (error === LEFT) t.tally.cancelled++
    return error
  })
}

/** A loader of `t` that counts as origin work (the soak holds `loads` against these calls). */
function counting(t: SoakTable, loader: Loader<Row | undefined, Id>): Loader<Row | undefined, Id> {
  return (id, context) => {
    t.tally.loaderCalls++
    return loader(id, context)
  }
}

/** A fetch of a fresh id on `t` with `loader`: it must settle (with anything but a bad-argument refusal). */
function hostileLoader(name: string, make: (t: SoakTable) => Loader<Row | undefined, Id>): BadInput {
  return {
    category: 'hostile loaders',
    name,
    expect: 'settle',
    lookups: 1,
    call: async (t, _good, n) => {
      const outcome = await counted(t, t.table.fetch(`hostile ${n}`, counting(t, make(t))))
      return (outcome as { code?: unknown } | null)?.code === 'ECHOSTORE_BAD_ARGUMENT' ? `was refused: ${String(outcome)}` : undefined
    },
  }
}

/** A custom store answering `get` with what `answer` returns; the rest as a store that holds nothing. */
function storeAnswering(answer: () => unknown): L2Store {
  return { get: answer as L2Store['get'], set: async () => true, nextVersion: async (_t, _i, floor) => floor, clear: async () => {}, close: async () => {} }
}

/** A table of its own with `options`: a fetch answered by the loader, a put, then close; resolves to what went wrong, if anything. */
async function ownTable(options: TableOptions, expectLoads = 1): Promise<string | undefined> {
  const table = createTable<Row>({ sweepInterval: 1e9, ...options })
  try {
    const row = { id: 'own', version: 1 } as unknown as Row
    const answer = await table.fetch('own', () => row)
    if (answer !== row) return `answered ${String(answer)}, not the loader's value`
    const { loads, l2_hits } = table.stats()
    if (loads !== expectLoads || l2_hits !== 0) return `counted loads ${loads}, l2_hits ${l2_hits}`
    await table.put('own', row)
    return undefined
  } catch (error) {
    return `rejected with ${String(error)}`
  } finally {
    await table.close()
  }
}

/** A collaborator entry: `run` makes and drives a table of its own. */
const collaborator = (name: string, run: () => Promise<string | undefined>): BadInput => ({ category: 'hostile collaborators', name, expect: 'settle', call: run })

/** The hostile entries, in catalog order. */
export function hostileEntries(): BadInput[] {
  return [
    { category: 'hostile signals', name: 'a signal whose aborted getter throws', expect: 'reject', call: (t) => t.table.fetch(6, () => undefined, { signal: signalWhose('aborted') }) },
    { category: 'hostile signals', name: 'a signal whose addEventListener throws', expect: 'reject', call: (t) => t.table.fetch(7, () => undefined, { signal: signalWhose('addEventListener') }) },
    hostileLoader('a loader that throws a string', () => () => {
      throw 'a string'
    }),
    hostileLoader('a loader that throws undefined', () => () => {
      throw undefined
    }),
    hostileLoader('a loader that rejects with null', () => () => Promise.reject(null)),
    // biome-ignore-start lint/suspicious/noThenProperty: thenables are the hostile input here
    hostileLoader('a thenable that never settles', () => () => ({ then() {} }) as PromiseLike<Row>),
    hostileLoader(
      'a thenable whose then throws',
      () => () =>
        ({
          then() {
            throw new Error('then threw')
          },
        }) as PromiseLike<Row>,
    ),
    hostileLoader(
      'a thenable that resolves twice',
      () => () =>
        ({
          then(resolve: (row: Row) => void) {
            resolve({ id: 'twice', version: 0 } as unknown as Row)
            resolve({ id: 'again', version: 0 } as unknown as Row)
          },
        }) as PromiseLike<Row>,
    ),
    // biome-ignore-end lint/suspicious/noThenProperty: thenables are the hostile input here
    hostileLoader('a value that is a throwing Proxy', () => (_id, context) => (context.setTtl(1), throwingProxy() as Row)),
    hostileLoader('a 64 MB value', () => (_id, context) => (context.setTtl(1), { id: 'x'.repeat(64 * 2 ** 20), version: 0 } as unknown as Row)),
    hostileLoader('a loader that invalidates its own id', (t) => async (id) => (await t.table.invalidate(id), { id, version: 0 } as unknown as Row)),
    hostileLoader('a loader that puts its own id', (t) => async (id) => (await t.table.put(id, { id, version: 0 } as unknown as Row), { id, version: 0 } as unknown as Row)),
    {
      category: 'hostile loaders',
      name: 'a never-settling loader left by its two waiters, by abort and by deadline',
      expect: 'settle',
      lookups: 2,
      call: async (t, _good, n) => {
        const controller = new AbortController()
        const hang = counting(t, () => never())
        const id = `hostile left ${n}`
        const left = counted(t, t.table.fetch(id, hang, { signal: controller.signal }))
        const timedOut = counted(t, t.table.fetch(id, hang, { timeout: 5 }))
        setTimeout(() => controller.abort(LEFT), 1)
        const [a, b] = await Promise.all([left, timedOut])
        return a === LEFT && (b instanceof FetchTimeoutError || b instanceof LoadTimeoutError) ? undefined : `settled with ${String(a)} and ${String(b)}`
      },
    },
    collaborator('a custom L2 whose get resolves null', () => ownTable({ l2: storeAnswering(async () => null) })),
    collaborator('a custom L2 whose get answers synchronously', () => ownTable({ l2: storeAnswering(() => ({ kind: 'value', value: 'sync', version: 0, ttl: 1_000 })) })),
    collaborator('a custom L2 entry of an unknown kind', () => ownTable({ l2: storeAnswering(async () => ({ kind: 'mystery', version: 0, ttl: 1_000 })) })),
    collaborator('a custom L2 entry of version 2^60', () => ownTable({ l2: storeAnswering(async () => ({ kind: 'value', value: 'v', version: 2 ** 60, ttl: 1_000 })) })),
    collaborator('a custom L2 entry living Infinity', () => ownTable({ l2: storeAnswering(async () => ({ kind: 'value', value: 'v', version: 0, ttl: Number.POSITIVE_INFINITY })) })),
    collaborator('a random that throws after construction', () => {
      let calls = 0
      return ownTable({
        jitter: 0.2,
        random: () => {
          if (calls++ > 0) throw new Error('entropy ran out')
          return 0.5
        },
      })
    }),
    collaborator('an inspect observer that throws once', () => {
      let throws = 1
      return ownTable({
        inspect: () => {
          if (throws-- > 0) throw new Error(EXPECTED_WARNING)
        },
      })
    }),
    collaborator('a loader fetching its own id in the batch of another flight', async () => {
      const table = createTable<string>({ sweepInterval: 1e9, loadTimeout: 1_000 })
      let inner: Promise<unknown> = Promise.resolve()
      const a = table.fetch('a', () => (void table.fetch('b', () => 'unused'), 'a'))
      const b = table.fetch('b', (id) => ((inner = table.fetch(id, () => 'inner').catch((error: unknown) => error)), 'b'))
      const answers = await Promise.all([a, b])
      const self = await inner
      await table.close()
      return answers.join() === 'a,b' && self instanceof SelfFetchError ? undefined : `answered ${answers.join()}, the inner fetch ${String(self)}`
    }),
  ]
}
