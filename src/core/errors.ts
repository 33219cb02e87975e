/**
 * Every error EchoStore raises, in one tree. Conditions of the cache itself (a closed table, a
 * deadline, a corrupt L2 entry, a closed bus) are subclasses of {@link EchoStoreError}, each with a
 * stable `ECHOSTORE_*` code. Bad arguments are the platform's own `TypeError` (wrong type) and
 * `RangeError` (out of range), built by {@link badArgument} with the code `ECHOSTORE_BAD_ARGUMENT`.
 * Every message starts with {@link PREFIX}.
 */
import { type Id, MAX_ID_LENGTH } from './id.js'

/** The one prefix of every message EchoStore writes. */
export const PREFIX = 'echostore: '

/** Longest id shown in a message, in UTF-16 code units; a longer one is cut with an ellipsis. */
const SHOWN_ID_LENGTH = 64

/** An id as a message shows it: JSON (so `1` and `"1"` differ), cut to a readable length. */
export function showId(id: Id): string {
  if (typeof id === 'number') return String(id)
  const text = JSON.stringify(id.length > SHOWN_ID_LENGTH ? id.slice(0, SHOWN_ID_LENGTH) : id)
  return id.length > SHOWN_ID_LENGTH ? `${text.slice(0, -1)}…" (${id.length} chars)` : text
}

/** Describes any value for an error message without throwing, whatever it is. */
export function describe(value: unknown): string {
  if (typeof value === 'string') return value.length > SHOWN_ID_LENGTH ? showId(value) : JSON.stringify(value)
  if (typeof value === 'bigint') return `${value}n`
  if (typeof value === 'function') return 'a function'
  if (typeof value === 'symbol') return value.toString()
  if (value === null || typeof value !== 'object') return String(value)
  try {
    return Array.isArray(value) ? 'an array' : 'an object'
  } catch {
    return 'an object' // a revoked Proxy: Array.isArray throws
  }
}

/** A signal's reason; what its getter threw, when it throws (a hostile subclass): whoever asks is answered either way. */
export function abortReason(signal: AbortSignal): unknown {
  try {
    return signal.reason
  } catch (error) {
    return error
  }
}

/**
 * What `error` says, for a message: an `Error`'s message, else {@link describe} of it. Never
 * throws, whatever was thrown (a null-prototype object, a revoked Proxy, a `message` getter that throws).
 */
export function reasonOf(error: unknown): string {
  try {
    return error instanceof Error ? String(error.message) : describe(error)
  } catch {
    return 'a value that cannot be shown'
  }
}

/** A bad argument: a `TypeError` (wrong type) or `RangeError` (out of range) with the code `ECHOSTORE_BAD_ARGUMENT`. */
export function badArgument(Kind: typeof TypeError | typeof RangeError, message: string, options?: ErrorOptions): TypeError | RangeError {
  return Object.assign(new Kind(PREFIX + message, options), { code: 'ECHOSTORE_BAD_ARGUMENT' as const })
}

/** The error for an id that `isId` refused, naming the call: a `RangeError` for a string too long, else a `TypeError`. */
export function badId(call: string, id: unknown): TypeError | RangeError {
  if (typeof id === 'string') return badArgument(RangeError, `${call} id is longer than ${MAX_ID_LENGTH} characters (got ${id.length}): ${describe(id)}`)
  return badArgument(TypeError, `${call} id must be a string or a finite number, got ${describe(id)}`)
}

/** `TypeError` for a value of the wrong type, `RangeError` for a number out of range: the rule for numeric options. */
export function badNumber(value: unknown, message: string): TypeError | RangeError {
  return badArgument(typeof value === 'number' ? RangeError : TypeError, message)
}

/**
 * The brand every EchoStore error carries: the names of its classes, from its own up to
 * {@link EchoStoreError}. It is a registered symbol (`Symbol.for`), so two copies of the package in
 * one process (an ES module and a CommonJS build, or two versions under `node_modules`) see the
 * same brand, and `instanceof` holds across them. Written once, by the {@link EchoStoreError}
 * constructor.
 */
const BRAND: unique symbol = Symbol.for('echostore.error.classes') as never

/** An error class, as a constructor of anything (the prototype chain is all that is read). */
type ErrorClass = abstract new (...args: never[]) => unknown

/** Each error class's names, computed once per class; written only by {@link classNames}. */
const namesByClass = new WeakMap<ErrorClass, readonly string[]>()

/** The class names of an error's chain, own class first, up to and including `EchoStoreError`. */
function classNames(target: ErrorClass): readonly string[] {
  let names = namesByClass.get(target)
  if (names === undefined) {
    const chain: string[] = []
    for (let at = target; at !== Error && typeof at === 'function' && at.name !== ''; at = Object.getPrototypeOf(at)) {
      chain.push(at.name)
      if (at.name === 'EchoStoreError') break
    }
    names = Object.freeze(chain)
    namesByClass.set(target, names)
  }
  return names
}

/** Base of every error EchoStore raises for a condition of its own; `code` is stable across releases. */
export abstract class EchoStoreError extends Error {
  /** A stable machine-readable code, `ECHOSTORE_*`. */
  abstract readonly code: string
  /** Its class names (the brand `instanceof` reads), not enumerable. */
  declare readonly [BRAND]: readonly string[]
  constructor(message: string, options?: ErrorOptions) {
    super(PREFIX + message, options)
    this.name = new.target.name
    Object.defineProperty(this, BRAND, { value: classNames(new.target) })
  }

  /**
   * `error instanceof TableClosedError` (or any EchoStore error class) holds for an error raised by
   * another copy of the package too: by its prototype chain, or else by its brand.
   */
  static override [Symbol.hasInstance](value: unknown): boolean {
    // `this` is the class `instanceof` asks about (a subclass too), not this one: Biome's fix would break subclasses.
    // biome-ignore lint/complexity/noThisInStatic: see above
    if (Function.prototype[Symbol.hasInstance].call(this, value)) return true
    if (typeof value !== 'object' || value === null) return false
    const names = (value as { [BRAND]?: unknown })[BRAND]
    // biome-ignore lint/complexity/noThisInStatic: the class `instanceof` asks about, as above
    return Array.isArray(names) && names.includes(this.name)
  }
}

/** A table's error about one id (or the whole table): it carries the table's name and the id. */
export abstract class TableError extends EchoStoreError {
  constructor(
    /** The table that raised it. */
    readonly table: string,
    /** The id the call asked for; `undefined` for a call about the whole table (`clear`). */
    readonly id: Id | undefined,
    message: string,
  ) {
    super(message)
  }
}

/** The calls a {@link TableClosedError} names. */
export type ClosedCall = 'fetch' | 'fetchMany' | 'get' | 'getMany' | 'peek' | 'has' | 'put' | 'invalidate' | 'clear' | 'invalidateTags' | 'namespace'

/** A fetch, put, invalidate or clear on a table that has been closed. Create a new table, or call it before `close()`. */
export class TableClosedError extends TableError {
  readonly code = 'ECHOSTORE_TABLE_CLOSED'
  /** `closed`: what was closed, when it is a namespace view of the table (`namespace "acme" of table "users"`), not the table itself. */
  constructor(table: string, id: Id | undefined, op: ClosedCall = 'fetch', closed?: string) {
    const fix = closed === undefined ? 'a closed table stays closed: make a new one with createTable()' : 'a closed view stays closed: table.namespace(name) makes a new one'
    super(table, id, `${closed ?? `table "${table}"`} is closed; ${op}(${id === undefined ? '' : showId(id)}) was refused (${fix})`)
  }
}

/** This waiter's own `timeout` passed; the flight goes on for the others and still fills the table. */
export class FetchTimeoutError extends TableError {
  readonly code = 'ECHOSTORE_FETCH_TIMEOUT'
  constructor(
    table: string,
    id: Id,
    /** The caller's `timeout`, in ms. */
    readonly timeout: number,
  ) {
    super(table, id, `the read of ${showId(id)} on table "${table}" gave up after its timeout of ${timeout} ms (its load goes on, and fills the row)`)
  }
}

/** The flight took longer than the table's `loadTimeout`; every waiter still waiting gets this. */
export class LoadTimeoutError extends TableError {
  readonly code = 'ECHOSTORE_LOAD_TIMEOUT'
  constructor(
    table: string,
    id: Id,
    /** The table's `loadTimeout`, in ms. */
    readonly loadTimeout: number,
    /** The flight's whole bound, in ms: `loadTimeout`, plus with a lease its `wait` and its L2 calls (`LEASE_L2_CALLS` store timeouts). */
    readonly bound: number = loadTimeout,
  ) {
    super(
      table,
      id,
      `loading ${showId(id)} for table "${table}" took longer than ${bound === loadTimeout ? `loadTimeout (${loadTimeout} ms)` : `${bound} ms (its bound with a lease: loadTimeout ${loadTimeout} ms, plus the lease's wait and L2 timeouts it may spend waiting for another process's fill)`}; ` +
        'the loader was aborted through its signal. Raise loadTimeout or make the loader faster.',
    )
  }
}

/**
 * The loader of this id failed in another process that held its lease, and this flight, waiting on
 * that lease, failed with it instead of asking the origin again (as the waiters of a flight in one
 * process do): its callers get this error, or a graced value (the fail-safe) where there is one.
 */
export class LeaseHolderFailedError extends TableError {
  readonly code = 'ECHOSTORE_LEASE_HOLDER_FAILED'
  constructor(table: string, id: Id) {
    super(
      table,
      id,
      `loading ${showId(id)} for table "${table}" failed in the process that held its lease, and this fetch waited on that load ` +
        "(one load per herd across processes, and its one outcome). The holder's own error is on its table's error event; " +
        'a fetch after this one loads afresh, and with grace a graced value answers instead.',
    )
  }
}

/**
 * An L2 store's `get` found an entry it cannot decode, or one that would pollute prototypes. The
 * table counts it (`l2_corrupt`) and reads it as a miss.
 */
export class L2CorruptEntryError extends EchoStoreError {
  readonly code = 'ECHOSTORE_L2_CORRUPT'
  constructor(
    /** The store's key of the entry. */
    readonly key: string,
    reason: string,
  ) {
    super(`L2 entry ${key} could not be decoded (${reason}); it is treated as a miss`)
  }
}

/** A bus was used after `close()`: a publish refused, or a wait for a subscription that never came. */
export class BusClosedError extends EchoStoreError {
  readonly code = 'ECHOSTORE_BUS_CLOSED'
  constructor(
    /** Which bus: `localBus` or `redisBus`. */
    readonly bus: string,
    what: string,
  ) {
    super(`${bus} is closed; ${what}`)
  }
}

/** An L2 store was called after its `close()`. */
export class L2ClosedError extends EchoStoreError {
  readonly code = 'ECHOSTORE_L2_CLOSED'
  constructor(
    /** Which store: `memoryL2` or `redisL2`. */
    readonly store: string,
    /** The call refused. */
    readonly op: string,
  ) {
    super(`${store}.${op} called after close()`)
  }
}

/**
 * A value an L2 store will not hold: larger than its `maxValueBytes`, or one its codec cannot encode
 * (a `BigInt` or a cycle with JSON). The table counts it (`l2_oversize`, `l2_codec_errors`), reads
 * such an entry as a miss, and keeps L2 from serving an older value instead (a put writes a tombstone).
 */
export class L2UnfitValueError extends EchoStoreError {
  readonly code = 'ECHOSTORE_L2_UNFIT'
  constructor(
    /** The store's key of the entry. */
    readonly key: string,
    /** Why: too large, or not encodable. */
    readonly reason: 'size' | 'codec',
    detail: string,
  ) {
    super(`L2 entry ${key} ${reason === 'size' ? 'is larger than the store accepts' : 'cannot be encoded'} (${detail}); the table answers from the loader`)
  }
}

/** A loader fetched its own id from its own table while loading it: that fetch would wait on its own load. */
export class SelfFetchError extends TableError {
  readonly code = 'ECHOSTORE_SELF_FETCH'
  constructor(table: string, id: Id) {
    super(
      table,
      id,
      `the loader of ${showId(id)} on table "${table}" fetched ${showId(id)} from the same table: that fetch would wait on its own load until loadTimeout. ` +
        'Return the value from the loader instead, or read it from the origin.',
    )
  }
}

/**
 * An entry of EchoStore was used without the optional peer dependency it is built on (ioredis or
 * node-redis for a `url` of `echostore/redis`). The message names the command that installs it.
 */
export class MissingPeerDependencyError extends EchoStoreError {
  readonly code = 'ECHOSTORE_PEER_MISSING'
  constructor(
    /** The package that is not installed, e.g. `ioredis`. */
    readonly dependency: string,
    /** The entry that needs it, e.g. `echostore/redis`. */
    readonly entry: string,
    /** The version range EchoStore supports, e.g. `5`. */
    range: string,
    options?: ErrorOptions,
    /** Another package that would do as well (either one is enough), with its range, and what asked for it. */
    either?: { also: string; alsoRange: string; adapter: string },
  ) {
    super(
      either === undefined
        ? `${entry} needs ${dependency}, which is not installed: run \`npm install ${dependency}@${range}\` (an optional peer dependency; the core entry \`echostore\` works without it)`
        : `${either.adapter}: a \`url\` or \`sentinels\` needs a Redis client library, and neither ${dependency} (node-redis) nor ${either.also} is installed: ` +
            `run \`npm install ${dependency}@${range}\` or \`npm install ${either.also}@${either.alsoRange}\`, or pass a client you made as \`client\``,
      options,
    )
  }
}

/** An L2 call that outlived the store's `timeout`, counted from the end of the event-loop turn that made it; reported on the table's `l2_error` event. */
export class L2TimeoutError extends EchoStoreError {
  readonly code = 'ECHOSTORE_L2_TIMEOUT'
  constructor(
    /** The store call: `get`, `set`, `nextVersion`, `clear` or a lease call (`leases.acquire`, …). */
    readonly op: string,
    /** The store's `timeout`, in ms. */
    readonly timeout: number,
    /** Why, when the store knows (its connection is down: `L2Store.cause`); the message ends with it. */
    cause?: Error,
  ) {
    super(`L2 ${op} took longer than ${timeout} ms${cause === undefined ? '' : `: ${cause.message}`}`, cause === undefined ? undefined : { cause })
  }
}

/** The error a `chaosL2` `throw` fault rejects with when it names none. */
export class ChaosError extends EchoStoreError {
  readonly code = 'ECHOSTORE_CHAOS'
  constructor(
    /** The faulted call. */
    readonly op: string,
  ) {
    super(`chaosL2: injected failure of L2 ${op}`)
  }
}

/**
 * Redis could not be reached, or did not answer in time: a readiness wait that ran out (`subscribed`),
 * or a call made while the connection is down. It names the host and carries the connection's own
 * error (`ECONNREFUSED`, `ETIMEDOUT`, …) as `cause` when there was one.
 */
export class RedisUnreachableError extends EchoStoreError {
  readonly code = 'ECHOSTORE_REDIS_UNREACHABLE'
  constructor(
    /** Which adapter: `redisL2` or `redisBus`. */
    readonly adapter: string,
    /** The Redis it tried: `host:port`, its seed nodes, or the Sentinel master name and sentinels. */
    readonly host: string,
    what: string,
    options?: ErrorOptions,
  ) {
    const cause = options?.cause
    super(`${adapter}: ${host} ${what}${cause instanceof Error ? `: ${cause.message}` : ''}`, options)
  }
}
