import { hasMethods } from '../core/has-methods.js'
import type { Id } from '../core/id.js'

/**
 * What an L2 entry holds:
 * - `value`: a loaded value (any value the codec can carry, `null` included);
 * - `absent`: the loader answered `undefined` (a negative row);
 * - `tombstone`: an invalidation marker; read as a miss, but its version still fences older writes.
 */
export type L2Kind = 'value' | 'absent' | 'tombstone'

/** One L2 entry as written by a table. */
export interface L2Write {
  kind: L2Kind
  /** The value; only meaningful when `kind` is `'value'`. */
  value?: unknown
  /** The version of what the entry holds (0 when unknown). Versions only grow per id. */
  version: number
  /** Logical lifetime in ms from now: the row's own. Integer ≥ 1. */
  ttl: number
  /**
   * Ms the store keeps the entry past its logical lifetime, as a graced value another table can fall
   * back on (its `grace`); the store expires the entry after `ttl + grace` (Redis `PX`). Integer ≥ 0, default 0.
   */
  grace?: number
  /**
   * The tag keys of the row (values and absent entries only): the entry is stale once one of them
   * was invalidated at or after `born` (see `tagVersions`). A store that keeps tags must give them
   * back as written; one without `tagVersions` is never given a tagged entry (the table writes a
   * tombstone in its place).
   */
  tags?: readonly string[]
  /** With `tags`: the row's birth on the table's tag version clock. */
  born?: number
}

/**
 * One L2 entry as read back: like {@link L2Write}, with `ttl` being the logical lifetime that remains
 * (0 or less: past it, within its grace) and `grace` the grace it was written with (absent when 0).
 */
export type L2Entry = L2Write

/**
 * The L2 contract: a dumb, table-scoped key-value store with per-entry expiry and a version guard.
 * Adapters do I/O only: no timeouts, retries, counting or fallback (the table's L2 facade owns
 * that policy). Any method may reject; the facade turns every failure into a miss. A `get` that finds
 * an entry it cannot decode rejects with `L2CorruptEntryError` (a miss, counted apart from failures).
 */
export interface L2Store {
  /**
   * Bound in ms on each call, applied by the table on its own clock (the adapter sets no timers),
   * counted from the end of the event-loop turn that made the call (a client may write the turn's
   * commands only then). Optional; the table uses {@link DEFAULT_L2_TIMEOUT} when absent.
   */
  readonly timeout?: number
  /** The server the store talks to, `host:port`, when it has one (`redisL2`): `echostore:l2` carries it. Optional. */
  readonly address?: string
  /**
   * The key space the store's entries live in, when stores of one kind can keep apart ones
   * (`redisL2`: the client's `keyPrefix` and its `prefix`); a string of at most 1,024 code units.
   * A table's bus messages carry it, and a table ignores messages carrying another
   * (`coh_foreign`): environments that share a Redis and a channel never clear each other. Optional.
   */
  readonly keySpace?: string
  /** The live entry for (table, id), or `undefined` when there is none or it has expired. */
  get(table: string, id: Id): Promise<L2Entry | undefined>
  /**
   * Optional: the entries of many ids of `table` in one round trip, in the order of `ids` (each as
   * `get` answers it). A batch read uses it when present, concurrent `get`s otherwise. An entry it
   * cannot decode is `undefined` in its place (counted by the store's own means), never a rejection.
   */
  getMany?(table: string, ids: readonly Id[]): Promise<(L2Entry | undefined)[]>
  /**
   * Writes the entry unless the store holds a strictly higher version for (table, id); a key that
   * holds garbage is overwritten. Resolves `true` when written, `false` when refused by the version
   * guard; rejects with `L2UnfitValueError` for a value the store will not hold (too large, or not
   * encodable), writing nothing.
   */
  set(table: string, id: Id, entry: L2Write): Promise<boolean>
  /**
   * Mints the next version for (table, id), atomically: the largest of `floor`, one more than the
   * last version it minted for the pair, and one more than the held entry's version. Two callers
   * never get the same version. A garbage version record is repaired, never a failure.
   */
  nextVersion(table: string, id: Id, floor: number): Promise<number>
  /**
   * Clears `table` in O(1): no entry of it written before the clear is read again, by this process
   * or any other sharing the store, and a write that raced the clear lands either before it (and is
   * cleared) or after it. Versions go on growing across a clear. A garbage clear record is repaired.
   */
  clear(table: string): Promise<void>
  /**
   * The node (or slot range) serving (table, id), when the store spreads ids over several (a Redis
   * Cluster's masters): the table keeps one circuit breaker per shard, so one failed node does not
   * skip L2 for ids on the others. Optional; absent or `undefined`: one breaker for the store.
   */
  shard?(table: string, id: Id): string | undefined
  /**
   * The error of the outage under (table, id)'s node (the whole store for `undefined`), if one is
   * going on: the table's `l2_error` for a timeout carries it as `cause`. Optional.
   */
  cause?(table: string, id: Id | undefined): Error | undefined
  /**
   * Optional, with {@link invalidateTags}: the versions of `tags` (tag keys of `table`), in their
   * order, 0 for a tag never invalidated. A table reads them for every tagged entry it gets, so an
   * entry older than a tag invalidated by any process is never answered.
   */
  tagVersions?(table: string, tags: readonly string[]): Promise<number[]>
  /**
   * Optional, with {@link tagVersions}: gives each of `tags` a new version, atomically per tag: the
   * largest of `floor` and one more than its last; answers them in order. A tag's version outlives
   * every entry that may carry it.
   */
  invalidateTags?(table: string, tags: readonly string[], floor: number): Promise<number[]>
  /** Per-id leases, when the store has them (`memoryL2` and `redisL2` do): a table's `lease` option needs them. */
  readonly leases?: L2Leases
  /** Releases connections the store opened itself. Idempotent. */
  close(): Promise<void>
}

/**
 * Per-id leases, for a table's `lease` option: the one process that holds an id's lease loads it
 * for every process sharing the store; the others wait for its fill. A lease expires on its own
 * after its `ttl`, so a holder that dies holds nothing for long.
 */
export interface L2Leases {
  /** Takes the lease of (table, id) for `ttl` ms under `token`, unless someone holds it: true when taken. */
  acquire(table: string, id: Id, token: string, ttl: number): Promise<boolean>
  /**
   * Optional: takes the leases of many ids of `table` under one `token`, each as `acquire` would, in
   * one round trip (per node of a cluster); answers, in the order of `ids`, true for each lease taken.
   * An id given twice is taken once (its later places answer false). A batch with leases uses it
   * when present, concurrent `acquire`s otherwise.
   */
  acquireMany?(table: string, ids: readonly Id[], token: string, ttl: number): Promise<boolean[]>
  /**
   * Optional: reads (table, id) as `get` does and, unless what it holds is a fill (a value or
   * negative row of a version ≥ `floor` whose logical lifetime is not over), takes its lease as
   * `acquire` does, in one step (one round trip, no fill landing between the two). `lease` says
   * whether it was asked for and taken; an entry `get` would reject is `undefined`. A flight with a
   * lease uses it for its first read when present (`get` then `acquire` then `get` again otherwise).
   */
  readOrAcquire?(table: string, id: Id, token: string, ttl: number, floor: number): Promise<LeaseRead>
  /**
   * Optional: `set` (its answer and its rejections), then the end of the lease, in one step: a
   * holder's fill and its giving back in one round trip. A write that landed ends the lease whoever
   * holds it (as `void` does: with the fill in the store, every reader finds it before asking for the
   * lease, so no read is spent on the token); a refused one releases it under `token` only. A holder
   * uses it for its write when present (`set` then `release` otherwise).
   */
  setAndRelease?(table: string, id: Id, entry: L2Write, token: string): Promise<boolean>
  /**
   * Optional: the token that holds the lease of (table, id) now, `undefined` when none does. A waiter
   * reads it when a holder says its loader failed, to take that failure as its own only when it
   * concerns the lease it waits on (not one that ran out and was taken over); without it, every
   * holder's failure of the id is taken as the waiters' own.
   */
  holder?(table: string, id: Id): Promise<string | undefined>
  /** Gives the lease of (table, id) back if `token` still holds it (compare-and-delete): true when released. */
  release(table: string, id: Id, token: string): Promise<boolean>
  /** Ends the lease of (table, id), whoever holds it (an invalidate voids it). */
  void(table: string, id: Id): Promise<void>
}

/** The default bound on one L2 call: 50 ms. A slow or dead L2 costs a miss at most this much. */
export const DEFAULT_L2_TIMEOUT = 50

/** The methods every {@link L2Store} has (the others are optional). */
export const L2_STORE_METHODS = ['get', 'set', 'nextVersion', 'clear', 'close'] as const

/** What a value that is not an L2 store is refused with, after the name of what was given: the methods wanted and how to make one. */
export const L2_STORE_RULE = `must be an L2Store (${L2_STORE_METHODS.join(', ')}), such as memoryL2() or redisL2({ url })`

/** True when `value` has every method of an {@link L2Store} (its shape only: it is not called). */
export function isL2Store(value: unknown): value is L2Store {
  return hasMethods(value, L2_STORE_METHODS)
}

/** What {@link L2Leases.readOrAcquire} answers: the entry read, and what became of the lease (`unasked`: the entry is a fill). */
export interface LeaseRead {
  entry: L2Entry | undefined
  lease: 'taken' | 'busy' | 'unasked'
}
