/** The hostile loaders of `spec/hostile-loaders.spec.ts`, by what they do; `table` is the table they load for. */
import type { Loader } from '../../src/index.js'

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

export const HOSTILE_LOADERS: [string, (table: { invalidate(id: string): Promise<unknown>; put(id: string, v: unknown): Promise<unknown> }) => Loader<unknown>][] = [
  [
    'throws a string',
    () => () => {
      throw 'a string'
    },
  ],
  [
    'throws undefined',
    () => () => {
      throw undefined
    },
  ],
  ['rejects with null', () => () => Promise.reject(null)],
  // biome-ignore-start lint/suspicious/noThenProperty: thenables are the hostile input here
  ['returns a thenable that never settles', () => () => ({ then() {} }) as PromiseLike<unknown>],
  [
    'returns a thenable whose then throws',
    () => () =>
      ({
        then() {
          throw new Error('then threw')
        },
      }) as PromiseLike<unknown>,
  ],
  [
    'returns a thenable that resolves twice',
    () => () =>
      ({
        then(resolve: (v: unknown) => void) {
          resolve('once')
          resolve('twice')
        },
      }) as PromiseLike<unknown>,
  ],
  [
    'returns a thenable that resolves then rejects',
    () => () =>
      ({
        then(resolve: (v: unknown) => void, reject: (e: unknown) => void) {
          resolve('once')
          reject(new Error('then rejects'))
        },
      }) as PromiseLike<unknown>,
  ],
  // biome-ignore-end lint/suspicious/noThenProperty: thenables are the hostile input here
  ['answers a throwing Proxy', () => () => throwingProxy],
  ['answers 64 MB', () => () => 'x'.repeat(64 * 2 ** 20)],
  ['invalidates its own id', (t) => (id) => t.invalidate(String(id)).then(() => 'after invalidate')],
  ['puts its own id', (t) => (id) => t.put(String(id), 'put').then(() => 'after put')],
  ['never settles', () => () => never],
]
