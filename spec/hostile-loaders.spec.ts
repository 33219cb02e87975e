/**
 * Whatever a loader does, every flight ends: after a catalog of hostile loaders on one table, and
 * the table's bound (`loadTimeout`) passed, no flight is left (`inflight` 0), every caller settled,
 * and `close()` resolves with no timer left on the clock.
 */
import { describe, expect, it } from 'vitest'
import { type Loader, type ManualClock, type TableOptions, createTable, manualClock, memoryL2 } from '../src/index.js'
import { advanceSettled, outcome, settle } from './support/latch.js'

const never = new Promise<never>(() => {})
const throwingProxy = new Proxy(
  {},
  {
    get() {
      throw new Error('hostile value: get')
    },
    has() {
      throw new Error('hostile value: has')
    },
    ownKeys() {
      throw new Error('hostile value: ownKeys')
    },
    getPrototypeOf() {
      throw new Error('hostile value: getPrototypeOf')
    },
  },
)

/** Each hostile loader, by what it does; `table` is the table it loads for. */
const CATALOG: [string, (table: { invalidate(id: string): Promise<unknown>; put(id: string, v: unknown): Promise<unknown> }) => Loader<unknown>][] = [
  ['throws a string', () => () => { throw 'a string' }],
  ['throws undefined', () => () => { throw undefined }],
  ['rejects with null', () => () => Promise.reject(null)],
  ['returns a thenable that never settles', () => () => ({ then() {} }) as PromiseLike<unknown>],
  ['returns a thenable whose then throws', () => () => ({ then() { throw new Error('then threw') } }) as PromiseLike<unknown>],
  ['returns a thenable that resolves twice', () => () => ({ then(resolve: (v: unknown) => void) { resolve('once'); resolve('twice') } }) as PromiseLike<unknown>],
  ['returns a thenable that resolves then rejects', () => () => ({ then(resolve: (v: unknown) => void, reject: (e: unknown) => void) { resolve('once'); reject(new Error('then rejects')) } }) as PromiseLike<unknown>],
  ['answers a throwing Proxy', () => () => throwingProxy],
  ['answers 64 MB', () => () => 'x'.repeat(64 * 2 ** 20)],
  ['invalidates its own id', (t) => (id) => t.invalidate(String(id)).then(() => 'after invalidate')],
  ['puts its own id', (t) => (id) => t.put(String(id), 'put').then(() => 'after put')],
  ['never settles', () => () => never],
]

const SHAPES: [string, (clock: ManualClock) => TableOptions][] = [
  ['without L2', () => ({})],
  ['with grace', () => ({ grace: 1_000 })],
  ['with a memory L2', (clock) => ({ l2: memoryL2({ clock }) })],
  ['with a memory L2 and leases', (clock) => ({ l2: memoryL2({ clock }), lease: true })],
]

describe('a catalog of hostile loaders on one table', () => {
  for (const [shape, options] of SHAPES) it(`(${shape}) ends every flight: inflight 0 past the bound, every caller settled, close() resolves, no timer left`, async () => {
    const clock = manualClock(0)
    const table = createTable<unknown>({ ttl: 1_000, jitter: 0, loadTimeout: 100, sweepInterval: 1e9, clock, ...options(clock) })
    const answers = CATALOG.map(([name, make]) => outcome(table.fetch(name, make(table as never))))
    // A never-settling loader whose two waiters leave, one by abort and one by its deadline.
    const controller = new AbortController()
    const hung = () => never
    answers.push(outcome(table.fetch('left', hung, { signal: controller.signal })))
    answers.push(outcome(table.fetch('left', hung, { timeout: 10 })))
    await settle()
    controller.abort(new Error('left'))
    await advanceSettled(clock, 1_000)
    expect(answers.filter((a) => a.state === 'pending')).toHaveLength(0)
    expect(table.stats().inflight).toBe(0)
    const closed = outcome(table.close())
    await advanceSettled(clock, 500)
    expect(closed.state).toBe('fulfilled')
    expect(clock.pending()).toBe(0)
  })
})
