/**
 * The bad-input catalog: calls the API must refuse with a `TypeError` or `RangeError` carrying the
 * code `ECHOSTORE_BAD_ARGUMENT` (as a rejected promise; as a synchronous throw where the API
 * documents one: `createTable`'s options, `setCoalescing`), plus edge ids that look odd but are
 * valid and must be served. The workload tries one entry at a time, in catalog order, so a run
 * of a few seconds already covers every entry; nothing a bad input returns may stay pending.
 */
import { type Id, LeaseHolderFailedError, type Loader, LoadTimeoutError, createTable } from '../src/index.js'
import { MAX_ID_LENGTH } from '../src/limits.js'
import type { PromiseLedger } from './ledger.js'
import { hostileEntries } from './hostile-inputs.js'
import { OriginError, makeLoader } from './loaders.js'
import type { Origin, Row } from './origin.js'
import { type Problems, show } from './problems.js'
import type { SoakTable } from './world.js'

/** The catalog's groups; each is one check in the report. */
export const CATEGORIES = [
  'bad ids',
  'bad loaders',
  'bad fetch options',
  'hostile option objects',
  'bad change versions',
  'bad table options',
  'bad gate values',
  'edge ids',
  'hostile signals',
  'hostile loaders',
  'hostile collaborators',
] as const
/** One group of the catalog. */
export type Category = (typeof CATEGORIES)[number]

/** One catalog entry: what it calls, and what must come of it. */
export interface BadInput {
  category: Category
  name: string
  /**
   * `reject`: a promise that rejects with a refusal; `throw`: a synchronous refusal; `serve`: a fetch
   * answered like any other (a value, or its flight's loader error); `settle`: a promise that
   * resolves to its own verdict (`undefined`: kept; else what broke).
   */
  expect: 'reject' | 'throw' | 'serve' | 'settle'
  /** Fetches of the soak's table that reach the lookup (1 for `serve`; 0 unless given otherwise). */
  lookups?: number
  /** `n` counts the catalog's tries: an entry that needs an id of its own makes it from `n`. */
  call(t: SoakTable, loader: Loader<Row | undefined, Id>, n: number): unknown
}

/** The rule an entry of `category` must keep (its breaks go to `Problems` under this name). */
export function ruleOf(category: Category): string {
  if (category === 'edge ids') return 'edge ids (the longest allowed, empty, lone-surrogate and prototype-named strings; -0, fractions, extreme numbers) are valid and served'
  if (category === 'hostile signals') return 'hostile signals (members that throw) are refused with TypeError (ECHOSTORE_BAD_ARGUMENT), never thrown, never pending'
  if (category === 'hostile loaders') return 'hostile loaders (non-Error throws, odd thenables, throwing or huge values, self-changes) settle every caller and leave no flight'
  if (category === 'hostile collaborators') return 'hostile collaborators (custom L2 answers, a failing random, a throwing observer, a self-fetch in a batch) never break a fetch'
  return `${category} are refused with TypeError/RangeError (ECHOSTORE_BAD_ARGUMENT), never pending`
}

/** Throws `Error` (not a TypeError) from any trap: a hostile options object. */
const hostile = () =>
  new Proxy(
    {},
    {
      get() {
        throw new Error('hostile proxy: get')
      },
      has() {
        throw new Error('hostile proxy: has')
      },
      ownKeys() {
        throw new Error('hostile proxy: ownKeys')
      },
    },
  )
const throwingGetter = (key: string) =>
  Object.defineProperty({}, key, {
    enumerable: true,
    get() {
      throw new Error(`hostile getter: ${key}`)
    },
  })

const ok = (id: unknown) => id as never
/** A fetch of `id` with `given.options`, and `given.loader` when given (else a good loader). */
const fetchWith = (category: Category, name: string, id: unknown, given: { loader?: unknown; options?: unknown } = {}): BadInput => ({
  category,
  name,
  expect: category === 'edge ids' ? 'serve' : 'reject',
  call: (t, good) => t.table.fetch(ok(id), ('loader' in given ? given.loader : good) as Loader<Row | undefined, Id>, given.options as never),
})
const tableWith = (category: Category, name: string, options: unknown): BadInput => ({
  category,
  name,
  expect: 'throw',
  call: () => createTable(options as never),
})

/** Every entry, in the order the workload tries them. */
export const CATALOG: readonly BadInput[] = [
  ...(
    [
      ['an object', {}],
      ['an array', []],
      ['NaN', Number.NaN],
      ['Infinity', Number.POSITIVE_INFINITY],
      ['-Infinity', Number.NEGATIVE_INFINITY],
      ['a symbol', Symbol('id')],
      ['a bigint', 10n],
      ['null', null],
      ['undefined', undefined],
      ['true', true],
      ['a function', () => 1],
      ['a boxed string', Object('boxed')],
      ['a 200,000-char string', 'h'.repeat(200_000)],
      ['a 16,385-char string (one over MAX_ID_LENGTH)', 'o'.repeat(MAX_ID_LENGTH + 1)],
    ] as const
  ).map(([name, id]) => fetchWith('bad ids', `fetch id ${name}`, id)),
  { category: 'bad ids', name: 'put id NaN', expect: 'reject', call: (t) => t.table.put(ok(Number.NaN), undefined) },
  { category: 'bad ids', name: 'put id an object', expect: 'reject', call: (t) => t.table.put(ok({ id: 1 }), undefined) },
  { category: 'bad ids', name: 'invalidate id a symbol', expect: 'reject', call: (t) => t.table.invalidate(ok(Symbol('id'))) },
  { category: 'bad ids', name: 'invalidate id Infinity', expect: 'reject', call: (t) => t.table.invalidate(ok(Number.POSITIVE_INFINITY)) },
  ...(
    [
      ['undefined', undefined],
      ['null', null],
      ['a string', 'loader'],
      ['a number', 42],
      ['an object', {}],
      ['a non-callable proxy', new Proxy({}, {})],
      ['a symbol', Symbol('loader')],
    ] as const
  ).map(([name, loader]) => fetchWith('bad loaders', `loader ${name}`, 1, { loader })),
  ...(
    [
      ['a number', 5],
      ['a string', 'fast'],
      ['null', null],
      ['true', true],
      ['timeout -1', { timeout: -1 }],
      ['timeout 0', { timeout: 0 }],
      ['timeout NaN', { timeout: Number.NaN }],
      ['timeout Infinity', { timeout: Number.POSITIVE_INFINITY }],
      ['timeout 2^31', { timeout: 2 ** 31 }],
      ['timeout "50"', { timeout: '50' }],
      ['signal a look-alike object', { signal: { aborted: false, addEventListener() {} } }],
      ['signal a string', { signal: 'abort' }],
      ['signal null', { signal: null }],
    ] as const
  ).map(([name, options]) => fetchWith('bad fetch options', `options ${name}`, 2, { options })),
  fetchWith('hostile option objects', 'fetch options with a throwing timeout getter', 3, { options: throwingGetter('timeout') }),
  fetchWith('hostile option objects', 'fetch options with a throwing signal getter', 3, { options: throwingGetter('signal') }),
  fetchWith('hostile option objects', 'fetch options a throwing proxy', 3, { options: hostile() }),
  { category: 'hostile option objects', name: 'put options with a throwing version getter', expect: 'reject', call: (t) => t.table.put(4, undefined, throwingGetter('version')) },
  { category: 'hostile option objects', name: 'put options a throwing proxy', expect: 'reject', call: (t) => t.table.put(4, undefined, hostile()) },
  { category: 'hostile option objects', name: 'invalidate options a throwing proxy', expect: 'reject', call: (t) => t.table.invalidate(4, hostile()) },
  tableWith('hostile option objects', 'createTable options with a throwing ttl getter', throwingGetter('ttl')),
  tableWith('hostile option objects', 'createTable options a throwing proxy', hostile()),
  ...(
    [
      ['-1', -1],
      ['1.5', 1.5],
      ['NaN', Number.NaN],
      ['Infinity', Number.POSITIVE_INFINITY],
      ['"3"', '3'],
      ['2^53', 2 ** 53],
      ['null', null],
    ] as const
  ).map(([name, version]): BadInput => ({ category: 'bad change versions', name: `put version ${name}`, expect: 'reject', call: (t) => t.table.put(5, undefined, { version: ok(version) }) })),
  { category: 'bad change versions', name: 'invalidate version -1', expect: 'reject', call: (t) => t.table.invalidate(5, { version: -1 }) },
  { category: 'bad change versions', name: 'invalidate version 0.5', expect: 'reject', call: (t) => t.table.invalidate(5, { version: 0.5 }) },
  ...(
    [
      ['ttl 0', { ttl: 0 }],
      ['ttl NaN', { ttl: Number.NaN }],
      ['jitter 1', { jitter: 1 }],
      ['capacity 0.5', { capacity: 0.5 }],
      ['sweepInterval 2^31', { sweepInterval: 2 ** 31 }],
      ['loadTimeout -1', { loadTimeout: -1 }],
      ['negativeTtl -1', { negativeTtl: -1 }],
      ['a typo (tll)', { tll: 60 }],
      ['name ""', { name: '' }],
      ['clock {}', { clock: {} }],
      ['l2 {}', { l2: {} }],
      ['bus {}', { bus: {} }],
      ['coalesce "yes"', { coalesce: 'yes' }],
      ['a number', 5],
    ] as const
  ).map(([name, options]) => tableWith('bad table options', `createTable ${name}`, options)),
  ...(['yes', 1, undefined, null] as const).map((on): BadInput => ({ category: 'bad gate values', name: `setCoalescing(${show(on)})`, expect: 'throw', call: (t) => t.table.setCoalescing(ok(on)) })),
  ...(
    [
      ['a 16,384-char string (MAX_ID_LENGTH)', 'w'.repeat(MAX_ID_LENGTH)],
      ['the empty string', ''],
      ['a lone surrogate', '\ud800'],
      ['"__proto__"', '__proto__'],
      ['"constructor"', 'constructor'],
      ['-0', -0],
      ['0.1 + 0.2', 0.1 + 0.2],
      ['2^53 + 2', 2 ** 53 + 2],
      ['Number.MAX_VALUE', Number.MAX_VALUE],
      ['Number.MIN_VALUE', Number.MIN_VALUE],
    ] as const
  ).map(([name, id]) => fetchWith('edge ids', `fetch id ${name}`, id)),
  ...hostileEntries(),
]

const refusal = (error: unknown) => (error instanceof TypeError || error instanceof RangeError) && (error as { code?: unknown }).code === 'ECHOSTORE_BAD_ARGUMENT'

/** Tries the catalog's entries in turn, checking each outcome; counts what it tried. */
export class BadInputs {
  /** Entries tried, by category. */
  readonly tried = Object.fromEntries(CATEGORIES.map((c) => [c, 0])) as Record<Category, number>
  #next = 0

  constructor(private readonly deps: { origin: Origin; ledger: PromiseLedger; problems: Problems }) {}

  /** Entries tried so far. */
  get count(): number {
    return this.#next
  }

  /** True once every entry of the catalog has been tried. */
  get covered(): boolean {
    return this.#next >= CATALOG.length
  }

  /** Tries the next entry on `t`; resolves once its outcome is checked. */
  async tryNext(t: SoakTable): Promise<void> {
    const n = this.#next++
    const entry = CATALOG[n % CATALOG.length]!
    const { origin, ledger, problems } = this.deps
    const rule = ruleOf(entry.category)
    const fail = (what: string) => problems.add(rule, `${t.label}: ${entry.name} ${what}`)
    this.tried[entry.category]++
    t.tally.lookups += entry.lookups ?? (entry.expect === 'serve' ? 1 : 0)
    let result: unknown
    try {
      result = entry.call(t, makeLoader({ kind: 'sync', delay: 0, reportVersion: false }, { label: t.label, origin, tally: t.tally, ledger }), n)
    } catch (error) {
      if (entry.expect !== 'throw' || !refusal(error)) fail(`threw synchronously: ${show(error)}`)
      return
    }
    if (entry.expect === 'throw') {
      fail(`returned ${show(result)} instead of throwing`)
      if (result !== null && typeof result === 'object' && 'close' in result) await (result as { close(): Promise<void> }).close()
      return
    }
    if (!(result instanceof Promise)) return fail(`returned ${show(result)}, not a promise`)
    await ledger.track('bad input', result).then(
      (value: unknown) => {
        if (entry.expect === 'reject') fail(`resolved ${show(value)}`)
        if (entry.expect === 'settle' && value !== undefined) fail(String(value))
      },
      (error: unknown) => {
        // A served edge id may share a flight whose loader failed (with a lease, in another table); it must never be refused as a bad argument.
        const named = entry.expect === 'serve' ? error instanceof OriginError || error instanceof LoadTimeoutError || error instanceof LeaseHolderFailedError : refusal(error)
        if (!named) fail(`rejected with ${show(error)}`)
      },
    )
  }
}
