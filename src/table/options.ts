import type { Bus } from '../bus/bus.js'
import { MAX_TABLE_LENGTH } from '../bus/message.js'
import { type Clock, MAX_TIMER_MS, isClock, systemClock, unfitClock } from '../core/clock.js'
import { badArgument, badNumber, describe, reasonOf } from '../core/errors.js'
import { readOptions } from './read-options.js'
import { DEFAULT_L2_TIMEOUT, L2_STORE_RULE, type L2Store, isL2Store } from '../l2/store.js'
import { hasMethods } from '../core/has-methods.js'
import type { Id } from '../core/id.js'
import type { OwnerInspector } from '../owner/inspector.js'
import type { BatchLoader, Loader } from '../core/loader.js'
import { Batch, type Origin, type RunBatchLoader, type RunLoader } from '../owner/loader.js'

/** Options of {@link createTable}. Every one is optional (leave it out, or pass `undefined`; `null` is refused); defaults are given beside each. */
// biome-ignore lint/suspicious/noExplicitAny: the defaults let `TableOptions` stand for a table of any value and id types
export interface TableOptions<V = any, K extends Id = any> {
  /** Names the table in L2 keys, bus messages, events and errors: a non-empty string of at most 1,024 characters. Default `'table'`. */
  name?: string
  /** Row lifetime in ms, in [1, {@link MAX_TTL}] (a year). Default `60_000`. */
  ttl?: number
  /** Each row expires at `ttl ± trunc(ttl·jitter)`, an integer offset drawn uniformly per row; `0 ≤ jitter < 1`. Default `0.1`. */
  jitter?: number
  /**
   * Most rows held, an integer in [1, {@link MAX_CAPACITY}]. A fill or put for a new id on a full table
   * evicts a row (`evictions`) or, when admission refuses it, is not stored (`full_skips`; a fill still
   * answers its waiters); replacing an id's row never counts as full. Default `100_000`.
   */
  capacity?: number
  /**
   * Most weight the rows hold together, in the units `sizeOf` returns (bytes, say): a positive
   * integer up to 2^53 − 1. Needs `sizeOf`. A write that would pass it evicts rows, as many as it
   * takes (`evictions`), a new id only if admission finds it asked for more often than all of them
   * together (else `full_skips`); a value heavier than `maxSize` is answered and not stored
   * (`heavy_skips`). With `capacity` too, the first bound reached binds. Default: none.
   */
  maxSize?: number
  /**
   * Weighs a value for `maxSize` (required with it): an integer ≥ 0, in the units of `maxSize`.
   * Called once for each value the table stores (fills and puts; a change heard on the bus stores a
   * tombstone), never for a negative row or a tombstone, which weigh 0. `id` is the id the caller
   * gave (in a namespace view, the id within it). One that throws or answers anything else leaves the row
   * unstored (`sizeof_errors`, and an `error` event naming the id); the fetch is still answered.
   */
  sizeOf?: (value: Exclude<V, undefined>, id: K) => number
  /** Ms between sweeper ticks, in [1, 2^31 − 1]; the timer never keeps the process alive. Default `1_000`. */
  sweepInterval?: number
  /** Lifetime of a negative row (the loader returned `undefined`), jittered like `ttl`: 0 (no negative caching) or in [1, a year]. Default `min(ttl, 5_000)`. */
  negativeTtl?: number
  /**
   * Bound on one flight (L2 and loader) in ms, in [1, 2^31 − 1]; past it every waiter still waiting gets
   * `LoadTimeoutError` (or, with `grace`, the graced value), the loader's signal aborts and the flight is
   * released. With `lease`, a flight's bound adds the lease's `wait` and five L2 timeouts (`LoadTimeoutError.bound`). Default `30_000`.
   */
  loadTimeout?: number
  /** The single-flight gate (`table.setCoalescing` turns it at run time). Default `true`. */
  coalesce?: boolean
  /**
   * Ms a row's value is kept after its (jittered) expiry, as a fallback: a graced row is no hit, but
   * a failing or slow origin can be answered from it (see `staleWhileRevalidate`, `softTimeout`,
   * `graceBackoff`). In [0, a year]. Default `0`: no grace.
   */
  grace?: number
  /**
   * A fetch of a graced row answers its value at once and starts (or joins, without waiting) the id's
   * one refresh flight. Needs `grace` > 0. Default `false`.
   */
  staleWhileRevalidate?: boolean
  /**
   * When a flight fails and its id has a graced value, every waiter gets that value (fail-safe), and the
   * origin is not tried again for this many ms: at most one flight per id per back-off. In
   * [1, 2^31 − 1]. Default `min(ttl, 5_000)`.
   */
  graceBackoff?: number
  /**
   * When the id has a graced value and its flight has not answered within this many ms, its waiters
   * get the graced value; the flight goes on and fills the row. In [1, 2^31 − 1]. Default: none.
   */
  softTimeout?: number
  /**
   * Cross-process single flight: a flight that misses L2 asks L2 for the id's lease; the holder loads
   * for every process sharing the L2, the others wait up to `wait` ms for its fill (see the README's
   * Leases). `true` or `{ ttl?, wait? }` (integers in [1, 2^31 − 1] ms; defaults: `ttl` =
   * `min(loadTimeout, 3_000)`, `wait` = `2 × ttl`). Needs an `l2` with leases (`memoryL2()`, `redisL2(...)`).
   * Default: off.
   */
  lease?: boolean | LeaseOptions
  /** The table's own loader: `table.get(id)` and `table.getMany(ids)` read through it (one flight per id). Set this or `batchLoader`, not both. */
  loader?: Loader<V, K>
  /**
   * The table's own batch loader: `table.get(id)` and `table.getMany(ids)` read through it, and the
   * ids that miss in one turn go to it as one call (split at `maxBatchSize`). Set this or `loader`.
   */
  batchLoader?: BatchLoader<V, K>
  /** Most ids in one batch loader call (larger batches are split), for `batchLoader` and `fetchMany`. An integer in [1, 100,000]. Default `1_000`. */
  maxBatchSize?: number
  /** Time source and timers: every timer the table uses goes through it. Default: the system clock (a timer bounding a pending call keeps the process alive until it settles; the sweeper's never does). */
  clock?: Clock
  /** Source of jitter, `Math.random`-like: called once at construction and refused unless it returns a number in [0, 1); a draw that goes bad later takes the middle of the band. Default `Math.random`. */
  random?: () => number
  /** A shared second layer (`memoryL2()`, `redisL2(...)`, or your own `L2Store`), read before the loader. Default: none. */
  l2?: L2Store
  /** A coherence bus (`localBus()`, `redisBus(...)`, or your own `Bus`). Default: none. */
  bus?: Bus
  /**
   * When true, `close()` also closes the `l2` and `bus` given here, once the table has stopped: for
   * a table that is their only user. Default `false` (they may be shared with other tables).
   */
  closeStores?: boolean
  /**
   * An xstate inspection observer (a function or an `{ next }` object) handed to the owner actor: it
   * sees every batch of messages the owner receives and every snapshot it commits. Default: none.
   */
  inspect?: OwnerInspector
}

/** The `lease` option's settings. */
export interface LeaseOptions {
  /** Ms a lease lasts: how long a holder that died keeps the others waiting. Default: `min(loadTimeout, 3_000)` (`DEFAULT_LEASE_TTL`). */
  ttl?: number
  /**
   * Ms a flight waits for another process's fill before it loads itself (it takes the lease over
   * when it can, also as the wait runs out). Default: twice the lease's `ttl`, so a waiter outlasts
   * the dead holder's lease and the lease of the one that took over.
   */
  wait?: number
}

/** The largest `maxBatchSize`. */
export const MAX_BATCH_SIZE = 100_000

/**
 * The lease settings of a table that has them, and `firstLook`: ms before a waiter first looks at L2
 * on its own (see `runner/lease.ts`): soon without a bus, where looking is how it finds the fill;
 * later with one, whose messages wake it, so its looks only cover a lost message or a dead holder.
 */
export type LeaseSettings = Required<LeaseOptions> & { firstLook: number }

/** A waiter's first look of its own at L2 without a bus, then with one, in ms. */
export const FIRST_LOOK_MS = { alone: 2, withBus: 25 } as const

/** Options after defaults and validation. */
export type ResolvedOptions = Required<Omit<TableOptions, 'l2' | 'bus' | 'inspect' | 'softTimeout' | 'lease' | 'loader' | 'batchLoader' | 'maxSize' | 'sizeOf'>> &
  Pick<TableOptions, 'l2' | 'bus' | 'inspect' | 'softTimeout' | 'maxSize' | 'sizeOf'> & {
    /** The key space of the `l2` (its `keySpace`), stamped on every message the table publishes; `undefined` when it has none. */
    space: string | undefined
    lease: LeaseSettings | undefined
    /** The table's own loader or batch loader, if it has one (`get`, `getMany`). */
    origin: Origin<unknown> | undefined
  }

/** Every option a table takes. */
const KNOWN = [
  'name',
  'ttl',
  'jitter',
  'capacity',
  'maxSize',
  'sizeOf',
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
] as const satisfies readonly (keyof TableOptions)[]

function fail(Kind: typeof TypeError | typeof RangeError, option: string, rule: string, got: unknown): never {
  throw badArgument(Kind, `option "${option}" ${rule}, got ${describe(got)}`)
}

function number(option: string, value: unknown, ok: (n: number) => boolean, rule: string): number {
  if (typeof value !== 'number' || !ok(value)) throw badNumber(value, `option "${option}" ${rule}, got ${describe(value)}`)
  return value
}

/** The longest row lifetime a table accepts (`ttl`, `negativeTtl`): a year, in ms. Longer ones overflow what L2 lifetimes and expiry arithmetic hold exactly. */
export const MAX_TTL = 365 * 24 * 60 * 60 * 1_000
/** The most rows a table holds: 2^30. */
export const MAX_CAPACITY = 2 ** 30

/** Draws once from `random`: a source that answers anything but a number in [0, 1) is refused now, not met as rows that never hit. */
function checkRandom(random: () => number): void {
  let sample: unknown
  try {
    sample = random()
  } catch (error) {
    throw badArgument(TypeError, `option "random" threw when called (${reasonOf(error)}); it must return a number in [0, 1)`)
  }
  if (!(typeof sample === 'number' && sample >= 0 && sample < 1)) fail(RangeError, 'random', 'must return a number in [0, 1) when called', sample)
}

/** The `lease` option: off, or its settings; refused without an L2 that has leases. */
function readLease(option: unknown, l2: L2Store | undefined, loadTimeout: number, withBus: boolean): LeaseSettings | undefined {
  if (option === undefined || option === false) return undefined
  if (option !== true && (option === null || typeof option !== 'object')) fail(TypeError, 'lease', 'must be true, false or { ttl?, wait? }', option)
  if (!hasMethods(l2?.leases, ['acquire', 'release', 'void'])) {
    throw badArgument(
      TypeError,
      `option "lease" needs an l2 whose store has leases, such as memoryL2() or redisL2({ url }): ${l2 === undefined ? 'give the table an l2' : 'the l2 given has no leases'}`,
    )
  }
  const given = option === true ? {} : (readOptions(option, ['ttl', 'wait'], 'option "lease"') as LeaseOptions)
  const rule = `must be an integer number of ms in [1, ${MAX_TIMER_MS}]`
  const integer = (n: number) => Number.isInteger(n) && n >= 1 && n <= MAX_TIMER_MS
  const ttl = number('lease.ttl', given.ttl ?? Math.min(Math.ceil(loadTimeout), DEFAULT_LEASE_TTL), integer, rule)
  const wait = number('lease.wait', given.wait ?? Math.min(2 * ttl, MAX_TIMER_MS), integer, rule)
  return { ttl, wait, firstLook: withBus ? FIRST_LOOK_MS.withBus : FIRST_LOOK_MS.alone }
}

/** Applies defaults and validates once, at construction. Throws a TypeError/RangeError naming the option and the value. */
export function resolveOptions(options: TableOptions = {}): ResolvedOptions {
  const o = readOptions(options, KNOWN, 'createTable') as TableOptions
  const name = o.name ?? 'table'
  if (typeof name !== 'string' || name.length === 0) fail(TypeError, 'name', 'must be a non-empty string', name)
  if (name.length > MAX_TABLE_LENGTH) fail(RangeError, 'name', `must be at most ${MAX_TABLE_LENGTH} characters (it travels on the bus)`, name)
  const ttl = number('ttl', o.ttl ?? 60_000, (n) => n >= 1 && n <= MAX_TTL, `must be a number of ms in [1, ${MAX_TTL}] (a year)`)
  const jitter = number('jitter', o.jitter ?? 0.1, (n) => n >= 0 && n < 1, 'must be a number with 0 ≤ jitter < 1')
  const capacity = number('capacity', o.capacity ?? 100_000, (n) => Number.isInteger(n) && n >= 1 && n <= MAX_CAPACITY, `must be an integer in [1, ${MAX_CAPACITY}]`)
  const { maxSize, sizeOf } = readWeight(o.maxSize, o.sizeOf)
  const sweepInterval = number('sweepInterval', o.sweepInterval ?? 1_000, (n) => n >= 1 && n <= MAX_TIMER_MS, `must be a number of ms in [1, ${MAX_TIMER_MS}]`)
  const negativeTtl = number('negativeTtl', o.negativeTtl ?? Math.min(ttl, 5_000), (n) => n === 0 || (n >= 1 && n <= MAX_TTL), `must be 0 (no negative rows) or a number of ms in [1, ${MAX_TTL}]`)
  const loadTimeout = number('loadTimeout', o.loadTimeout ?? 30_000, (n) => n >= 1 && n <= MAX_TIMER_MS, `must be a number of ms in [1, ${MAX_TIMER_MS}]`)
  const coalesce = o.coalesce ?? true
  if (typeof coalesce !== 'boolean') fail(TypeError, 'coalesce', 'must be a boolean', coalesce)
  const grace = number('grace', o.grace ?? 0, (n) => n >= 0 && n <= MAX_TTL, `must be a number of ms in [0, ${MAX_TTL}] (a year)`)
  const staleWhileRevalidate = o.staleWhileRevalidate ?? false
  if (typeof staleWhileRevalidate !== 'boolean') fail(TypeError, 'staleWhileRevalidate', 'must be a boolean', staleWhileRevalidate)
  if (staleWhileRevalidate && grace === 0) {
    throw badArgument(
      RangeError,
      'option "staleWhileRevalidate" needs "grace" > 0 (the ms a row\'s value is kept past its expiry, to answer with): set grace, or leave staleWhileRevalidate off; got grace 0',
    )
  }
  const graceBackoff = number('graceBackoff', o.graceBackoff ?? Math.min(ttl, 5_000), (n) => n >= 1 && n <= MAX_TIMER_MS, `must be a number of ms in [1, ${MAX_TIMER_MS}]`)
  const softTimeout = o.softTimeout === undefined ? undefined : number('softTimeout', o.softTimeout, (n) => n >= 1 && n <= MAX_TIMER_MS, `must be a number of ms in [1, ${MAX_TIMER_MS}]`)
  const clock = o.clock ?? systemClock
  const unfit = clock === systemClock ? undefined : unfitClock(clock)
  if (unfit !== undefined) fail(isClock(clock) ? RangeError : TypeError, 'clock', unfit, clock)
  const random = o.random ?? Math.random
  if (typeof random !== 'function') fail(TypeError, 'random', 'must be a function returning a number in [0, 1)', random)
  checkRandom(random)
  const { l2, bus, inspect } = o
  if (l2 !== undefined) {
    if (!isL2Store(l2)) fail(TypeError, 'l2', L2_STORE_RULE, l2)
    if (l2.timeout !== undefined) number('l2.timeout', l2.timeout, (n) => n >= 1 && n <= MAX_TIMER_MS, `must be a number of ms in [1, ${MAX_TIMER_MS}]`)
    if (l2.keySpace !== undefined && (typeof l2.keySpace !== 'string' || l2.keySpace.length > MAX_TABLE_LENGTH)) {
      fail(TypeError, 'l2.keySpace', `must be a string of at most ${MAX_TABLE_LENGTH} code units (it travels on the bus)`, l2.keySpace)
    }
  }
  if (bus !== undefined && !hasMethods(bus, ['publish', 'subscribe', 'close'])) {
    fail(TypeError, 'bus', 'must be a Bus (publish, subscribe, close), such as localBus() or redisBus({ url })', bus)
  }
  if (inspect !== undefined && typeof inspect !== 'function' && !hasMethods(inspect, ['next'])) {
    fail(TypeError, 'inspect', 'must be an xstate inspection observer: a function, or an object with next(event)', inspect)
  }
  const closeStores = o.closeStores ?? false
  if (typeof closeStores !== 'boolean') fail(TypeError, 'closeStores', 'must be a boolean', closeStores)
  const lease = readLease(o.lease, l2, loadTimeout, bus !== undefined)
  const maxBatchSize = number('maxBatchSize', o.maxBatchSize ?? 1_000, (n) => Number.isInteger(n) && n >= 1 && n <= MAX_BATCH_SIZE, `must be an integer in [1, ${MAX_BATCH_SIZE}]`)
  const origin = readOrigin(o.loader, o.batchLoader, maxBatchSize)
  return {
    name,
    ttl,
    jitter,
    capacity,
    maxSize,
    sizeOf,
    sweepInterval,
    negativeTtl,
    loadTimeout,
    coalesce,
    grace,
    staleWhileRevalidate,
    graceBackoff,
    softTimeout,
    lease,
    clock,
    random,
    l2,
    space: l2?.keySpace,
    bus,
    closeStores,
    inspect,
    maxBatchSize,
    origin,
  }
}

/** The `maxSize` and `sizeOf` options: both or neither. */
function readWeight(maxSize: unknown, sizeOf: unknown): Pick<ResolvedOptions, 'maxSize' | 'sizeOf'> {
  if (maxSize === undefined && sizeOf === undefined) return { maxSize: undefined, sizeOf: undefined }
  if (sizeOf === undefined) fail(TypeError, 'sizeOf', 'is required with "maxSize": give a function (value, id) => its weight, an integer ≥ 0 in the units of maxSize', sizeOf)
  if (typeof sizeOf !== 'function') fail(TypeError, 'sizeOf', 'must be a function (value, id) => its weight, an integer ≥ 0 in the units of maxSize', sizeOf)
  if (maxSize === undefined) fail(TypeError, 'maxSize', 'is required with "sizeOf": give the most weight the rows may hold, a positive integer', maxSize)
  number('maxSize', maxSize, (n) => Number.isSafeInteger(n) && n >= 1, `must be an integer in [1, ${Number.MAX_SAFE_INTEGER}] (in the units sizeOf returns)`)
  return { maxSize: maxSize as number, sizeOf: sizeOf as ResolvedOptions['sizeOf'] }
}

/** The table's own origin: its `loader`, or its `batchLoader` (with `maxBatchSize`), or none. */
function readOrigin(loader: unknown, batchLoader: unknown, maxBatchSize: number): Origin<unknown> | undefined {
  if (loader !== undefined && batchLoader !== undefined) throw badArgument(TypeError, 'option "loader" and "batchLoader" cannot both be set: give the table one of them')
  if (loader !== undefined && typeof loader !== 'function') fail(TypeError, 'loader', 'must be a function (id, context) => value', loader)
  if (batchLoader !== undefined && typeof batchLoader !== 'function')
    fail(TypeError, 'batchLoader', 'must be a function (ids, context) => values (an array in the order of ids, or a Map)', batchLoader)
  if (loader !== undefined) return loader as RunLoader<unknown>
  return batchLoader === undefined ? undefined : new Batch(batchLoader as RunBatchLoader<unknown>, maxBatchSize)
}

/**
 * The default lease `ttl`: 3 s (or `loadTimeout`, when shorter). It is how long a holder that died
 * keeps the others waiting before one takes over, so it is what a request pays in that worst case:
 * a few seconds, which a web request can live with, and longer than most origin loads (a holder
 * still loading when its lease expires may load alongside the one that took over).
 */
export const DEFAULT_LEASE_TTL = 3_000

/**
 * The L2 calls a lease adds to a flight beyond its `wait`: the first `acquire`; the last look, begun
 * before the wait ran out (a `get`, the release of a holder that gave up, or in its place the read
 * of who holds the lease when a holder said it failed, an `acquire`); and the
 * read a new holder makes before it loads. Each is bounded by the store's timeout.
 */
export const LEASE_L2_CALLS = 5

/**
 * How long one flight of a table may run before `LoadTimeoutError`: `loadTimeout`, plus, with a
 * lease, its `wait` and the lease's own L2 calls (a flight may wait for another process's load
 * before its own: see {@link LEASE_L2_CALLS}).
 */
export function flightBoundOf(options: ResolvedOptions): number {
  if (options.lease === undefined) return options.loadTimeout
  return options.loadTimeout + options.lease.wait + LEASE_L2_CALLS * (options.l2?.timeout ?? DEFAULT_L2_TIMEOUT)
}

/**
 * The L2 calls of a put up to its last write landing, each bounded by the store's timeout: the
 * version it mints, its entry's write, and the tombstone written in its place when L2 will not hold
 * the value.
 */
export const PUT_L2_CALLS = 3

/**
 * How long a tombstone (in L1, and in L2 as a change writes it) remembers its version: past the rows
 * of its id's lifetime (`ttl`), past any flight it may fence (`flightBound`), and past the L2 write of
 * any older put in progress when it was written (`PUT_L2_CALLS` store timeouts), which L2 must refuse.
 */
export function tombstoneLifeOf(options: ResolvedOptions, flightBound: number): number {
  return Math.max(options.ttl, flightBound, PUT_L2_CALLS * (options.l2?.timeout ?? DEFAULT_L2_TIMEOUT))
}
