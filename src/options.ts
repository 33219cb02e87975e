import type { Bus } from './bus/bus.js'
import { type Clock, MAX_TIMER_MS, systemClock } from './clock.js'
import { badArgument, badNumber, describe } from './errors.js'
import type { L2Store } from './l2/store.js'
import type { OwnerInspector } from './inspector.js'

/** Options of {@link createTable}. Every one is optional; defaults are given beside each. */
export interface TableOptions {
  /** Names the table in L2 keys, bus messages, events and errors. Default `'table'`. */
  name?: string
  /** Row lifetime in ms: finite, > 0. Default `60_000`. */
  ttl?: number
  /** Each row expires at `ttl ± trunc(ttl·jitter)`, drawn uniformly per row; `0 ≤ jitter < 1`. Default `0.1`. */
  jitter?: number
  /** Most rows held; a fill for a new id when full is not stored (`full_skips`). Integer ≥ 1. Default `100_000`. */
  capacity?: number
  /** Ms between sweeper ticks: finite, > 0. Default `1_000`. */
  sweepInterval?: number
  /** Lifetime of a negative row (the loader returned `undefined`); 0 disables negative caching. Default `min(ttl, 5_000)`. */
  negativeTtl?: number
  /** Bound on one flight in ms; past it every waiter gets `LoadTimeoutError`. Default `30_000`. */
  loadTimeout?: number
  /** The single-flight gate. Default `true`. */
  coalesce?: boolean
  /** Time source and timers. Default: the system clock (timers never keep the process alive). */
  clock?: Clock
  /** Source of jitter, `Math.random`-like. Default `Math.random`. */
  random?: () => number
  /** A shared second layer (`memoryL2()`, `redisL2(...)`, or your own `L2Store`). Default: none. */
  l2?: L2Store
  /** A coherence bus (`localBus()`, `redisBus(...)`, or your own `Bus`). Default: none. */
  bus?: Bus
  /**
   * An xstate inspection observer (a function or an `{ next }` object) handed to the owner actor: it
   * sees every batch of messages the owner receives and every snapshot it commits. Default: none.
   */
  inspect?: OwnerInspector
}

/** Options after defaults and validation. */
export type ResolvedOptions = Required<Omit<TableOptions, 'l2' | 'bus' | 'inspect'>> & Pick<TableOptions, 'l2' | 'bus' | 'inspect'>

const KNOWN = new Set<string>(['name', 'ttl', 'jitter', 'capacity', 'sweepInterval', 'negativeTtl', 'loadTimeout', 'coalesce', 'clock', 'random', 'l2', 'bus', 'inspect'])

function hasMethods(value: unknown, methods: string[]): boolean {
  return value !== null && typeof value === 'object' && methods.every((m) => typeof (value as Record<string, unknown>)[m] === 'function')
}

function fail(Kind: typeof TypeError | typeof RangeError, option: string, rule: string, got: unknown): never {
  throw badArgument(Kind, `option "${option}" ${rule}, got ${describe(got)}`)
}

function number(option: string, value: unknown, ok: (n: number) => boolean, rule: string): number {
  if (typeof value !== 'number' || !ok(value)) throw badNumber(value, `option "${option}" ${rule}, got ${describe(value)}`)
  return value
}

/** Applies defaults and validates once, at construction. Throws a TypeError/RangeError naming the option and the value. */
export function resolveOptions(options: TableOptions = {}): ResolvedOptions {
  if (options === null || typeof options !== 'object') throw badArgument(TypeError, `createTable takes an options object, got ${describe(options)}`)
  for (const key of Object.keys(options)) {
    if (!KNOWN.has(key)) throw badArgument(TypeError, `unknown option "${key}" (known: ${[...KNOWN].join(', ')})`)
  }
  const o = options
  const name = o.name ?? 'table'
  if (typeof name !== 'string' || name.length === 0) fail(TypeError, 'name', 'must be a non-empty string', name)
  const ttl = number('ttl', o.ttl ?? 60_000, (n) => Number.isFinite(n) && n > 0, 'must be a finite number > 0')
  const jitter = number('jitter', o.jitter ?? 0.1, (n) => n >= 0 && n < 1, 'must be a number with 0 ≤ jitter < 1')
  const capacity = number('capacity', o.capacity ?? 100_000, (n) => Number.isInteger(n) && n >= 1, 'must be an integer ≥ 1')
  const sweepInterval = number('sweepInterval', o.sweepInterval ?? 1_000, (n) => n > 0 && n <= MAX_TIMER_MS, `must be a number of ms in (0, ${MAX_TIMER_MS}]`)
  const negativeTtl = number('negativeTtl', o.negativeTtl ?? Math.min(ttl, 5_000), (n) => Number.isFinite(n) && n >= 0, 'must be a finite number ≥ 0')
  const loadTimeout = number('loadTimeout', o.loadTimeout ?? 30_000, (n) => n > 0 && n <= MAX_TIMER_MS, `must be a number of ms in (0, ${MAX_TIMER_MS}]`)
  const coalesce = o.coalesce ?? true
  if (typeof coalesce !== 'boolean') fail(TypeError, 'coalesce', 'must be a boolean', coalesce)
  const clock = o.clock ?? systemClock
  if (
    clock === null ||
    typeof clock !== 'object' ||
    typeof clock.now !== 'function' ||
    typeof clock.setTimeout !== 'function' ||
    typeof clock.clearTimeout !== 'function'
  ) {
    fail(TypeError, 'clock', 'must be an object with now(), setTimeout(fn, ms) and clearTimeout(handle)', clock)
  }
  const random = o.random ?? Math.random
  if (typeof random !== 'function') fail(TypeError, 'random', 'must be a function returning a number in [0, 1)', random)
  const { l2, bus, inspect } = o
  if (l2 !== undefined) {
    if (!hasMethods(l2, ['get', 'set', 'nextVersion', 'close'])) {
      fail(TypeError, 'l2', 'must be an L2Store (get, set, nextVersion, close), such as memoryL2() or redisL2({ url })', l2)
    }
    if (l2.timeout !== undefined) number('l2.timeout', l2.timeout, (n) => n > 0 && n <= MAX_TIMER_MS, `must be a number of ms in (0, ${MAX_TIMER_MS}]`)
  }
  if (bus !== undefined && !hasMethods(bus, ['publish', 'subscribe', 'close'])) {
    fail(TypeError, 'bus', 'must be a Bus (publish, subscribe, close), such as localBus() or redisBus({ url })', bus)
  }
  if (inspect !== undefined && typeof inspect !== 'function' && !hasMethods(inspect, ['next'])) {
    fail(TypeError, 'inspect', 'must be an xstate inspection observer: a function, or an object with next(event)', inspect)
  }
  return { name, ttl, jitter, capacity, sweepInterval, negativeTtl, loadTimeout, coalesce, clock, random, l2, bus, inspect }
}
