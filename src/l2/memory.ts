import { isClock, systemClock, unfitClock, type Clock } from '../core/clock.js'
import { L2ClosedError, badArgument, badNumber, describe } from '../core/errors.js'
import { readOptions } from '../table/read-options.js'
import type { Id } from '../core/id.js'
import { MAX_VERSION, isVersion } from '../core/versions.js'
import { TAG_TTL_MS, entryKey, l2Key, tagVersionKey, VERSION_TTL_MS } from './keys.js'
import { MemoryLeases } from './memory-leases.js'
import type { L2Entry, L2Kind, L2Store, L2Write } from './store.js'

/** Options of {@link memoryL2}. */
export interface MemoryL2Options {
  /** Time for expiry; tests pass a `manualClock`. Default: the system clock. */
  clock?: Clock
}

/** A {@link memoryL2} store: an `L2Store` that also tells how many entries it holds. */
export interface MemoryL2 extends L2Store {
  /** Entries held now, expired ones not yet dropped included. */
  readonly size: number
  /** The entries of many ids in one call (see `L2Store.getMany`). */
  getMany(table: string, ids: readonly Id[]): Promise<(L2Entry | undefined)[]>
  /** `await using` support: the same as `close()`. */
  [Symbol.asyncDispose](): Promise<void>
}

interface Stored {
  kind: L2Kind
  value: unknown
  version: number
  /** Clock time at which the entry dies: live while `now < expiresAt`. */
  expiresAt: number
  /** Ms of `expiresAt` that are grace: its logical expiry is `expiresAt − grace`. */
  grace: number
  /** The row's tag keys and birth, when it has tags. */
  tags?: readonly string[]
  born?: number
}

interface Counter {
  version: number
  expiresAt: number
}

const KINDS: ReadonlySet<unknown> = new Set<L2Kind>(['value', 'absent', 'tombstone'])

/** Sweeps run at most once per this many writes, and otherwise once per entry left by the last sweep. */
const MIN_SWEEP_EVERY = 64

function checkWrite(entry: L2Write): void {
  if (!KINDS.has(entry.kind)) throw badArgument(TypeError, `memoryL2.set: kind must be 'value', 'absent' or 'tombstone', got ${describe(entry.kind)}`)
  if (!isVersion(entry.version)) throw badNumber(entry.version, `memoryL2.set: version must be an integer in [0, ${MAX_VERSION}], got ${describe(entry.version)}`)
  if (!Number.isSafeInteger(entry.ttl) || entry.ttl < 1) throw badNumber(entry.ttl, `memoryL2.set: ttl must be an integer ≥ 1, got ${describe(entry.ttl)}`)
  if (entry.grace !== undefined && !(Number.isSafeInteger(entry.grace) && entry.grace >= 0)) throw badNumber(entry.grace, `memoryL2.set: grace must be an integer ≥ 0, got ${describe(entry.grace)}`)
  if (entry.tags !== undefined) {
    if (!Array.isArray(entry.tags) || !entry.tags.every((tag) => typeof tag === 'string')) throw badArgument(TypeError, `memoryL2.set: tags must be an array of strings, got ${describe(entry.tags)}`)
    if (!isVersion(entry.born)) throw badNumber(entry.born, `memoryL2.set: born must be an integer in [0, ${MAX_VERSION}], got ${describe(entry.born)}`)
  }
}

function checkTagKeys(op: string, tags: readonly string[]): void {
  if (!Array.isArray(tags) || !tags.every((tag) => typeof tag === 'string')) throw badArgument(TypeError, `memoryL2.${op}: tags must be an array of strings, got ${describe(tags)}`)
}

function checkFloor(floor: number): void {
  if (!isVersion(floor)) throw badNumber(floor, `memoryL2.nextVersion: floor must be an integer in [0, ${MAX_VERSION}], got ${describe(floor)}`)
}

/**
 * An in-process L2 with the same semantics as `redisL2`: entries expire after their `ttl` on the
 * clock, `set` is refused only when the held version is strictly higher, `nextVersion` per
 * (table, id) is the largest of the caller's floor, one more than the last version it issued and one
 * more than the live entry's version, and (table, id) pairs are keyed as in Redis (`1` and `'1'`
 * are distinct). Values are held as given, never encoded: `maxValueBytes` does not apply here.
 *
 * Values are held by reference, as an L1 holds them: mutating an object after `set`, or one read by
 * `get`, changes what the store holds. Expired entries are dropped when a read or write meets them,
 * and a full sweep runs once the writes since the last sweep reach what that sweep left held (at
 * least 64), so the store holds at most about twice its live entries (+ 64), at amortised O(1) per
 * write. Version counters lapse like Redis version keys
 * (`VERSION_TTL_MS` after their last issue), tag versions after `TAG_TTL_MS`; leases expire after their `ttl`, as Redis keys do. `clear(table)` moves the table to its next generation,
 * as Redis does: entries of earlier generations are never read again and are swept once expired.
 * After `close()` every call rejects.
 */
export function memoryL2(options: MemoryL2Options = {}): MemoryL2 {
  const { clock = systemClock } = readOptions(options, ['clock'], 'memoryL2') as MemoryL2Options
  const unfit = clock === systemClock ? undefined : unfitClock(clock)
  if (unfit !== undefined) throw badArgument(isClock(clock) ? RangeError : TypeError, `memoryL2: the option \`clock\` ${unfit}, got ${describe(clock)}`)
  const entries = new Map<string, Stored>()
  const counters = new Map<string, Counter>()
  const leases = new MemoryLeases(
    clock,
    open,
    (now) => maybeSweep(now),
    read,
    (table, id, entry) => store.set(table, id, entry),
  )
  /** Each cleared table's generation (absent: 0, never cleared). */
  const generations = new Map<string, number>()
  const keyOf = (table: string, id: Id) => entryKey('', table, id, generations.get(table) ?? 0)
  /** Writes left before the next sweep: reset by each sweep to what it left held (at least 64). */
  let writesToSweep = MIN_SWEEP_EVERY
  /** Writes left before the next sweep of version counters, tag versions and leases: reset as {@link writesToSweep}, by what that sweep left. */
  let writesToSweepRecords = MIN_SWEEP_EVERY
  let closed = false

  function open(op: string): void {
    if (closed) throw new L2ClosedError('memoryL2', op)
  }

  function liveEntry(key: string, now: number): Stored | undefined {
    const entry = entries.get(key)
    if (entry === undefined || entry.expiresAt > now) return entry
    entries.delete(key)
    return undefined
  }

  function liveCounter(key: string, now: number): Counter | undefined {
    const counter = counters.get(key)
    if (counter === undefined || counter.expiresAt > now) return counter
    counters.delete(key)
    return undefined
  }

  // Entries and the records kept beside them (version counters, tag versions: days or years; leases)
  // are swept apart, each once the writes since its last sweep reach what that sweep left: long-lived
  // records do not put off the sweep of entries, which then stay within about twice the live ones.
  function maybeSweep(now: number): void {
    if (--writesToSweep <= 0) {
      for (const [key, entry] of entries) if (entry.expiresAt <= now) entries.delete(key)
      writesToSweep = Math.max(MIN_SWEEP_EVERY, entries.size)
    }
    if (--writesToSweepRecords <= 0) {
      for (const [key, counter] of counters) if (counter.expiresAt <= now) counters.delete(key)
      leases.sweep(now)
      writesToSweepRecords = Math.max(MIN_SWEEP_EVERY, counters.size + leases.size)
    }
  }

  /** The live entry of (table, id) as a read answers it, with its remaining lifetime. */
  function read(table: string, id: Id, now: number): L2Entry | undefined {
    const entry = liveEntry(keyOf(table, id), now)
    if (entry === undefined) return undefined
    const ttl = entry.expiresAt - entry.grace - now
    const answer: L2Entry = entry.kind === 'value' ? { kind: 'value', value: entry.value, version: entry.version, ttl } : { kind: entry.kind, version: entry.version, ttl }
    if (entry.grace > 0) answer.grace = entry.grace
    if (entry.tags !== undefined) {
      answer.tags = entry.tags
      answer.born = entry.born!
    }
    return answer
  }

  const store: MemoryL2 = {
    /** `await using` support: the same as `close()`. */
    [Symbol.asyncDispose](): Promise<void> {
      return this.close()
    },
    get size() {
      return entries.size
    },

    async get(table: string, id: Id): Promise<L2Entry | undefined> {
      open('get')
      return read(table, id, clock.now())
    },

    async getMany(table: string, ids: readonly Id[]): Promise<(L2Entry | undefined)[]> {
      open('getMany')
      const now = clock.now()
      return ids.map((id) => read(table, id, now))
    },

    async set(table: string, id: Id, entry: L2Write): Promise<boolean> {
      open('set')
      checkWrite(entry)
      const key = keyOf(table, id)
      const now = clock.now()
      const held = liveEntry(key, now)
      if (held !== undefined && held.version > entry.version) return false
      const value = entry.kind === 'value' ? entry.value : undefined
      const grace = entry.grace ?? 0
      const stored: Stored = { kind: entry.kind, value, version: entry.version, expiresAt: now + entry.ttl + grace, grace }
      if (entry.tags !== undefined && entry.kind !== 'tombstone') {
        stored.tags = [...entry.tags]
        stored.born = entry.born!
      }
      entries.set(key, stored)
      maybeSweep(now)
      return true
    },

    async nextVersion(table: string, id: Id, floor: number): Promise<number> {
      open('nextVersion')
      checkFloor(floor)
      const key = l2Key('', table, id)
      const now = clock.now()
      const issued = liveCounter(key, now)?.version ?? 0
      const held = liveEntry(keyOf(table, id), now)?.version ?? 0
      const version = Math.max(issued + 1, held + 1, floor)
      counters.set(key, { version, expiresAt: now + VERSION_TTL_MS })
      maybeSweep(now)
      return version
    },

    async tagVersions(table: string, tags: readonly string[]): Promise<number[]> {
      open('tagVersions')
      checkTagKeys('tagVersions', tags)
      const now = clock.now()
      return tags.map((tag) => liveCounter(tagVersionKey('', table, tag), now)?.version ?? 0)
    },

    async invalidateTags(table: string, tags: readonly string[], floor: number): Promise<number[]> {
      open('invalidateTags')
      checkTagKeys('invalidateTags', tags)
      if (!isVersion(floor)) throw badNumber(floor, `memoryL2.invalidateTags: floor must be an integer in [0, ${MAX_VERSION}], got ${describe(floor)}`)
      const now = clock.now()
      const versions = tags.map((tag) => {
        const key = tagVersionKey('', table, tag)
        const version = Math.max((liveCounter(key, now)?.version ?? 0) + 1, floor)
        counters.set(key, { version, expiresAt: now + TAG_TTL_MS })
        return version
      })
      maybeSweep(now)
      return versions
    },

    async clear(table: string): Promise<void> {
      open('clear')
      if (typeof table !== 'string') throw badArgument(TypeError, `memoryL2.clear: table must be a string, got ${describe(table)}`)
      generations.set(table, (generations.get(table) ?? 0) + 1)
    },

    leases,

    async close(): Promise<void> {
      closed = true
      leases.clear()
      entries.clear()
      counters.clear()
    },
  }
  return store
}
