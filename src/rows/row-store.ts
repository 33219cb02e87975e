import type { Clock } from '../core/clock.js'
import type { Id } from '../core/id.js'
import type { TagVersions } from '../tags/tag-versions.js'
import { FrequencySketch } from './frequency-sketch.js'
import { IdIndex, hashId } from './id-index.js'

/** Slots the columns get on the first write (or the capacity, if smaller); they double from there. */
const FIRST_SLOTS = 1_024

/** Largest shard the sweeper rebuilds in one step; a larger one (a table with one big shard) has its rows deleted one by one. */
const REBUILD_ROWS = 16_384

/** Most rows the eviction hand passes for one insert: a full table never walks its rows in one step. */
const HAND_STEPS = 64
/** Refusals of admission a victim survives (unread) before the frequency it is weighed with halves. */
const REFUSALS_PER_HALVING = 8
/** Most refusals a visited byte counts (its seven upper bits). */
const MAX_REFUSALS = 127
/** Rows the admission filter of a table bounded by weight is first sized for; it grows with the rows held (see {@link RowStore.countRequests}). */
const FIRST_SKETCH_ROWS = 256

/** What {@link RowStore.live} answers when `id` has no live row. */
export const NOT_LIVE: unique symbol = Symbol('not live')

/** Where a sweep pass has got to: the shard it walks, and its place in that shard's insertion order. */
export interface SweepCursor {
  /** The position in `shards` (or, when it walks them all, the shard itself). */
  shard: number
  /** The shards it walks, in this order; undefined: every shard, in index order. */
  shards: readonly number[] | undefined
  /** The slots of the shard being walked, in insertion order. */
  slots: Iterator<number> | undefined
  /** True once every shard was walked. */
  done: boolean
  /**
   * Where the pass leaves the shards it puts off (undefined: it puts none off): a shard of at most
   * {@link REBUILD_ROWS} rows whose every row is reclaimable by `wholeBy`, and none of whose rows
   * became reclaimable before `dueSince`, is left for a later walk, which drops it whole instead of
   * walking it twice.
   */
  putOff: number[] | undefined
  /** See `putOff`. */
  wholeBy: number
  /** See `putOff`. */
  dueSince: number
}

/**
 * A cursor at the start of a pass over `shards` (default: all). With `putOff`, the pass leaves
 * the shards that will be wholly reclaimable by `putOff.wholeBy` (and have no row reclaimable
 * since before `putOff.dueSince`) in `putOff.into`, for a later walk of those shards alone.
 */
export function newSweepCursor(shards?: readonly number[], putOff?: { into: number[]; wholeBy: number; dueSince: number }): SweepCursor {
  return { shard: 0, shards, slots: undefined, done: false, putOff: putOff?.into, wholeBy: putOff?.wholeBy ?? 0, dueSince: putOff?.dueSince ?? 0 }
}

/**
 * A table's rows, stored in columns: an {@link IdIndex} from id to a slot, and one array per field,
 * indexed by slot, so a row costs an index entry and a cell in each column, never an object of its
 * own. It holds at most `capacity` rows; the columns grow by doubling, never past it, and a freed
 * slot is reused before a new one.
 *
 * A row is live (it answers hits) while its expiry is ahead of the clock; past it, the row stays
 * `grace` ms more as a graced value (no hit, but a fallback: see {@link RowStore.gracedAt}). A
 * negative row ("the loader found nothing") holds `undefined`. A tombstone (see
 * {@link RowStore.bury}) answers no hit but remembers a version until its forget time.
 *
 * A full store makes room for a new id the SIEVE way (Zhang et al., NSDI 2024), with TinyLFU
 * admission: a hit sets its row's visited bit (no reordering, no allocation); a hand walks each
 * shard in insertion order, clearing visited bits (and counting each in the frequency sketch), to
 * the first unvisited row, the victim; the new id takes its place only if it was asked for more
 * often lately than the victim (see {@link FrequencySketch}), so one-off ids never flush the rows
 * read again. A victim that keeps its place counts one refusal; every {@link REFUSALS_PER_HALVING}
 * refusals without a hit halve the frequency it is weighed with, so rows that were popular once and
 * are read no more give way to the new popular ones without waiting for the sketch to age (see
 * {@link RowStore.makeRoom}). A row the hand meets that the sweeper would reclaim already (past its
 * expiry plus the grace, or stale by its tags) goes without the admission test, visited or not:
 * expired rows go first, between sweeps too.
 *
 * With a `maxSize`, each row also has a weight (its value's `sizeOf`, given to {@link RowStore.write};
 * negative rows and tombstones weigh 0) and the rows held never weigh more than `maxSize` in all: a
 * write that would pass it first evicts rows the same way, as many as it takes, and a new id is
 * admitted only if it was asked for more often lately than all the victims it would displace
 * together (Caffeine weighs a candidate against its victims the same way, one at a time).
 *
 * A row may carry tag keys (see `tags/scope.ts`) and its birth: it answers nothing (no hit, no graced
 * value, no `peek`) once one of its tags was invalidated at or after its birth (see {@link TagVersions}).
 * The three tag columns are made by the first tagged write: a table without tags never pays for them.
 *
 * Written only by the owner, but for the visited bytes, which the hit path sets to 1 (through
 * {@link RowStore.live}) and the owner's hand clears, and the tag check marks (`#checked`), which
 * any reader of a tagged row writes once per epoch (a cache of the check's answer, see {@link RowStore.live}).
 */
export class RowStore<V> {
  readonly #capacity: number
  /** Most weight the rows hold together (`Infinity`: no bound by weight). */
  readonly #maxSize: number
  /** Per slot, with a `maxSize` only: the row's weight (0 for a negative row, a tombstone or a free slot). */
  #weights: Float64Array | undefined
  /** The weight held now: the sum of `#weights`. */
  #weight = 0
  /** Rows the admission filter was sized for (see {@link RowStore.countRequests}). */
  #sketchRows = 0
  /** The victims {@link RowStore.makeRoom} has chosen so far for a weighed write: reused, emptied by every call. */
  readonly #chosen = new Set<number>()
  /** Rows the last {@link #victim} walk passed (the slot it stopped at included). */
  #walked = 0
  /** True when the slot the last {@link #victim} walk stopped at is reclaimable: it goes without the admission test. */
  #victimReclaimable = false
  readonly #index: IdIndex
  /** Per slot, 1 for a tombstone that fences nothing (see {@link bury}): it is never young. Made with the first; written only by {@link write} (0) and {@link bury}. */
  #fencesNothing: Uint8Array | undefined = undefined
  /** Rows held now, tombstones included. */
  #size = 0
  /** Ids added to the index so far: {@link write} adding a new id is the only way an id gains a slot (a rebuild or a clear only removes). Written only by `write`. */
  #inserts = 0
  /** The last id {@link live} found no slot for (no row, no tombstone), and {@link #inserts} as it looked. Written only by `live`. */
  #absent: Id | undefined = undefined
  #absentAt = -1
  /** Per slot: the row's id (so a walker of slots can remove it from the index); `undefined` for a free slot. */
  #ids: (Id | undefined)[] = []
  /** Per slot: the value; `undefined` for a negative row, a tombstone or a free slot. */
  #values: (V | undefined)[] = []
  /** Per slot: when the row stops answering hits. A tombstone holds `-forgetAt`, never ahead of a (non-negative) clock. */
  #expires = new Float64Array(0)
  /**
   * Per slot: the version of what the row holds (0 when unknown). Made by the first write of a
   * version other than 0: a table that never sees a version never pays for the column.
   */
  #versions: Float64Array | undefined = undefined
  /** Per slot: the stamp of the write that wrote the row (see {@link RowStore.write}); a free slot holds the next free slot + 1 instead (0: none). */
  #stamps = new Uint32Array(0)
  /**
   * Per slot: bit 0 is 1 once the row was read since the hand last passed it; bits 1–7 count the
   * admissions the row refused as a victim since (see {@link RowStore.evictFor}). The hit path
   * writes 1 (read, no refusals); the hand writes 0 and the refusal count.
   */
  #visited = new Uint8Array(0)
  /** Per slot, with grace only: until when the fail-safe answers from the graced value without trying the origin (0: no back-off). */
  #retryAt = new Float64Array(0)
  /** Ms a row's value is kept past its expiry, as a graced value. */
  readonly #grace: number
  /**
   * How often each id was asked for lately: the admission filter. Made once the store first holds
   * half its capacity (as Caffeine does): a table that never fills pays neither its memory nor its
   * counting, and a full one has counted half a table of requests by then.
   */
  #sketch: FrequencySketch | undefined = undefined
  /**
   * Per shard: the eviction hand, where it stopped in the shard's insertion order (undefined: at the
   * oldest row). A live `Map` iterator keeps every hash table its map outgrew since it last moved
   * (V8 links them for it): so a hand is dropped whenever its shard gets room another way (a row
   * swept or removed), and never parks while the table runs below capacity and its maps grow.
   */
  readonly #hands: (Iterator<number> | undefined)[]
  /**
   * Per shard: no row of it becomes reclaimable (expiry plus grace; a tombstone: its forget time)
   * before this. A lower bound: lowered by every write, made exact by every walk of the shard.
   */
  readonly #earliest: Float64Array
  /** Per shard: every row of it is reclaimable from this instant on. An upper bound: raised by every write, made exact by every walk of the shard. */
  readonly #latest: Float64Array
  /** The last stamp handed out: counts the store's writes, wrapping at 2^32. */
  #stamp = 0
  /** The first free slot (-1: none); each free slot links to the next through `#stamps`. */
  #free = -1
  /** Slots handed out so far; the columns' cells from here on were never used. */
  #used = 0
  /** Per slot, once a row was written with tags: its tag keys (`undefined`: none). */
  #tagKeys: (readonly string[] | undefined)[] | undefined = undefined
  /** Per slot, with the tag keys: the row's birth on the tag version clock; +∞ for a slot without tags (so the earliest birth is one scan of this column). */
  #born = new Float64Array(0)
  /** Per slot, with the tag keys: the tag epoch under which the row was last found fresh (−1: never). */
  #checked = new Float64Array(0)
  /** The tags' epoch the shards' reclaim bounds took in (tag-stale rows are reclaimable whatever their expiry). */
  #boundsEpoch = 0
  /** The table's tag versions, against which tagged rows are checked. */
  readonly #tags: TagVersions | undefined

  /** `maxSize` bounds the rows' weight together (see {@link RowStore.write}); without it, only `capacity` bounds them. */
  constructor(capacity: number, grace = 0, tags?: TagVersions, maxSize = Number.POSITIVE_INFINITY) {
    this.#capacity = capacity
    this.#maxSize = maxSize
    this.#weights = maxSize === Number.POSITIVE_INFINITY ? undefined : new Float64Array(0)
    this.#grace = grace
    this.#tags = tags
    this.#index = new IdIndex(capacity)
    this.#hands = new Array<Iterator<number> | undefined>(this.#index.shards).fill(undefined)
    this.#earliest = new Float64Array(this.#index.shards).fill(Number.POSITIVE_INFINITY)
    this.#latest = new Float64Array(this.#index.shards).fill(Number.NEGATIVE_INFINITY)
  }

  /** The earliest birth of a tagged row held (stale ones included); +∞ when none is. */
  oldestBirth(): number {
    let oldest = Number.POSITIVE_INFINITY
    if (this.#tagKeys === undefined) return oldest
    const born = this.#born
    for (let slot = 0; slot < this.#used; slot++) if (born[slot]! < oldest) oldest = born[slot]!
    return oldest
  }

  /** Rows held, tombstones included. */
  get size(): number {
    return this.#size
  }

  /** The weight the rows hold now (0 without a `maxSize`). */
  get weight(): number {
    return this.#weight
  }

  /** Most weight the rows hold together; `Infinity` without a `maxSize`. */
  get maxSize(): number {
    return this.#maxSize
  }

  /** True when the rows are bounded by weight: every value written must be weighed. */
  get weighed(): boolean {
    return this.#weights !== undefined
  }

  /**
   * True when writing a row of `weight` for `id`, whose slot (from {@link find}) is `found`, needs
   * room made first (see {@link makeRoom}): a new id on a full store, or a weight that would take the
   * rows past `maxSize` (the row's own old weight goes with it).
   */
  needsRoom(found: number, weight: number): boolean {
    if (found < 0 && this.#size >= this.#capacity) return true
    // The old weight comes off first: near 2^53 a sum rounds, and a row that does not fit would seem to.
    return this.#weights !== undefined && this.#weight - (found < 0 ? 0 : this.#weights[found]!) + weight > this.#maxSize
  }

  /**
   * The value of `id`'s row if it is live now on `clock` (`undefined` for a negative row), else
   * {@link NOT_LIVE}; a live row is marked visited. The clock is read only when there is a row.
   */
  live(id: Id, clock: Clock): V | undefined | typeof NOT_LIVE {
    const slot = this.#index.get(id)
    if (slot === undefined) {
      this.#absent = id
      this.#absentAt = this.#inserts
      return NOT_LIVE
    }
    if (this.#expires[slot]! <= clock.now()) return NOT_LIVE
    if (this.#tagKeys !== undefined && !this.#fresh(slot)) return NOT_LIVE
    this.#visited[slot] = 1
    return this.#values[slot]
  }

  /** True when a table has ever stored a tagged row: only then can a row be stale by its tags. */
  get tagged(): boolean {
    return this.#tagKeys !== undefined
  }

  /** True when `id`'s row (not a tombstone) is older than one of its tags: no read answers it. */
  staleByTags(id: Id): boolean {
    const slot = this.find(id)
    return slot >= 0 && this.#tagKeys !== undefined && this.#expires[slot]! > 0 && !this.#fresh(slot)
  }

  /**
   * True unless the row at `slot` carries a tag invalidated at or after its birth. The answer is
   * kept per row under the tags' epoch, so a hit on a tagged row checks its tags only once after
   * each invalidation (the one write a reader makes besides the visited bit).
   */
  #fresh(slot: number): boolean {
    const keys = this.#tagKeys![slot]
    if (keys === undefined) return true
    const tags = this.#tags!
    if (this.#checked[slot] === tags.epoch) return true
    if (tags.stale(keys, this.#born[slot]!)) return false
    this.#checked[slot] = tags.epoch
    return true
  }

  /**
   * The value of the row at `slot` (from {@link find}) within its grace at `now`, so it can stand in
   * for a fresh one: a value or negative row (never a tombstone) whose expiry plus the grace has not
   * passed. Fresh rows qualify too (a forced refresh that fails falls back on them). Else {@link NOT_LIVE}.
   */
  gracedAt(slot: number, now: number): V | undefined | typeof NOT_LIVE {
    if (slot < 0) return NOT_LIVE
    const expiresAt = this.#expires[slot]!
    return expiresAt > 0 && expiresAt + this.#grace > now && (this.#tagKeys === undefined || this.#fresh(slot)) ? this.#values[slot] : NOT_LIVE
  }

  /** The graced value of `id` at `now` once its row has expired: {@link gracedAt} of an expired row; else {@link NOT_LIVE}. */
  graced(id: Id, now: number): V | undefined | typeof NOT_LIVE {
    const slot = this.find(id)
    return slot >= 0 && this.#expires[slot]! <= now ? this.gracedAt(slot, now) : NOT_LIVE
  }

  /** When the row at `slot` expired (or expires): how stale its value is is `now` minus this. */
  expiryAt(slot: number): number {
    return this.#expires[slot]!
  }

  /** Until when the fail-safe answers the row at `slot` from its graced value without trying the origin; 0 when it does not. */
  retryAt(slot: number): number {
    return slot < 0 || this.#retryAt.length === 0 ? 0 : this.#retryAt[slot]!
  }

  /** Keeps the origin from being tried for the row at `slot` until `at` (never past its grace). */
  holdOff(slot: number, at: number): void {
    this.#retryAt[slot] = Math.min(at, this.#expires[slot]! + this.#grace)
  }

  /** Counts `times` requests of `id` in the admission filter (a miss, a put), once the store is half full (by rows, or by weight). */
  countRequests(id: Id, times: number): void {
    if (this.#sketch === undefined && this.#size * 2 < this.#capacity && this.#weight * 2 < this.#maxSize) return
    this.#filter().increment(hashId(id), times)
  }

  /**
   * The admission filter, made on first use: sized for the capacity, or, for a store bounded by
   * weight (whose rows may stay far below the capacity), for twice the rows held, made anew (its
   * counts lost) each time the rows held outgrow it, as Caffeine's weighted caches do.
   */
  #filter(): FrequencySketch {
    const sketch = this.#sketch
    if (sketch !== undefined && this.#sketchRows >= this.#size) return sketch
    this.#sketchRows = this.#weights === undefined ? this.#capacity : Math.min(this.#capacity, Math.max(FIRST_SKETCH_ROWS, 2 * this.#size))
    return (this.#sketch = new FrequencySketch(this.#sketchRows))
  }

  /**
   * Makes room to write a row of `weight` for `id`, whose slot (from {@link find}) is `found`, when
   * {@link needsRoom} says so; returns how many rows it evicted, or -1 when it evicted none and the
   * row must not be written. Without a `maxSize`, one victim (see {@link evictFor}). With one, the
   * hands walk from `id`'s shard on, choosing victims (never `id`'s own row; a row weighing 0 only
   * when a row is needed) until they free enough rows and weight: a new id (or one holding only a
   * tombstone: it has no old value) is refused (each victim counting one refusal) as soon as the
   * frequencies of the victims not yet reclaimable at `now` together reach its own (a reclaimable
   * one costs nothing: see {@link #victim}); a row replacing `id`'s value or negative row never is
   * (its old value must not stay): the hands walk past any young tombstones, three laps of each
   * shard if need be, until there is room, which the other rows' weight always makes (a value is
   * never heavier than `maxSize`). `admitted`: the write goes in as a replacement does, whatever
   * admission would say (the fail-safe's graced value, which holds the origin off for the id). `now`
   * is the owner's clock reading.
   */
  makeRoom(id: Id, found: number, weight: number, keepTombstonesAfter: number, now: number, admitted: boolean): number {
    if (this.#weights === undefined) return this.evictFor(id, keepTombstonesAfter, now, admitted) ? 1 : -1
    const weights = this.#weights
    const chosen = this.#chosen
    chosen.clear()
    const rowsNeeded = found < 0 && this.#size >= this.#capacity ? 1 : 0
    const weightNeeded = this.#weight - (found < 0 ? 0 : weights[found]!) - this.#maxSize + weight
    const hash = hashId(id)
    const sketch = this.#filter()
    const replacing = admitted || (found >= 0 && this.#expires[found]! > 0)
    const worth = replacing ? Number.POSITIVE_INFINITY : sketch.frequency(hash)
    const shards = this.#index.shards
    let cost = 0
    let freed = 0
    let shard = hash & (shards - 1)
    for (let tried = 0; tried < shards && (chosen.size < rowsNeeded || freed < weightNeeded); tried++, shard = (shard + 1) & (shards - 1)) {
      // In three laps of the shard every row that may go was offered unvisited. A newcomer's walk
      // leaves a shard after {@link HAND_STEPS} rows that may not go (young tombstones); a
      // replacement's walks on to the laps' end.
      for (let left = 3 * this.#index.shard(shard).size + 1; left > 0 && (chosen.size < rowsNeeded || freed < weightNeeded); left -= this.#walked) {
        const slot = this.#victim(shard, keepTombstonesAfter, now, replacing ? left : Math.min(HAND_STEPS, left))
        if (slot < 0) break
        if (slot === found || chosen.has(slot) || (weights[slot] === 0 && chosen.size >= rowsNeeded)) continue
        if (!this.#victimReclaimable) {
          cost += this.#worthOf(slot, sketch)
          if (cost >= worth) {
            chosen.add(slot)
            this.#refuse(chosen)
            return -1
          }
        }
        chosen.add(slot)
        freed += weights[slot]!
      }
    }
    if (chosen.size < rowsNeeded || freed < weightNeeded) {
      this.#refuse(chosen)
      return -1
    }
    for (const slot of chosen) {
      this.#index.delete(this.#ids[slot]!)
      this.#release(slot)
    }
    const evicted = chosen.size
    chosen.clear()
    return evicted
  }

  /** The frequency a victim at `slot` is weighed with: the filter's, halved for every {@link REFUSALS_PER_HALVING} admissions it refused since it was last read. */
  #worthOf(slot: number, sketch: FrequencySketch): number {
    return sketch.frequency(hashId(this.#ids[slot]!)) >>> Math.floor((this.#visited[slot]! >>> 1) / REFUSALS_PER_HALVING)
  }

  /** Counts one refused admission on each of `victims`, which stay; empties the set. */
  #refuse(victims: Set<number>): void {
    for (const slot of victims) this.#visited[slot] = Math.min((this.#visited[slot]! >>> 1) + 1, MAX_REFUSALS) << 1
    victims.clear()
  }

  /**
   * Makes room for `id`, which has no row, in a full store: the hand of `id`'s shard (or, when that
   * shard is empty, of the next) walks at most {@link HAND_STEPS} rows, clearing visited bits, to the
   * first row reclaimable at `now` or unvisited that may go (see {@link #victim}); a reclaimable one
   * goes at once, and `id` takes an unvisited one's place if the admission filter has seen it more
   * often than the victim, whose frequency halves for every {@link REFUSALS_PER_HALVING} admissions
   * it refused since it was last read (`admitted`: whatever the filter says, see {@link makeRoom}).
   * Returns true when it evicted the victim, false when `id` is refused (nothing changed but the
   * hand, the visited bits and the victim's refusal count).
   */
  evictFor(id: Id, keepTombstonesAfter: number, now: number, admitted = false): boolean {
    const hash = hashId(id)
    const shards = this.#index.shards
    let shard = hash & (shards - 1)
    while (this.#index.shard(shard).size === 0) shard = (shard + 1) & (shards - 1)
    // An admitted write walks as a replacement does, past any young tombstones: three laps of the shard.
    const victim = this.#victim(shard, keepTombstonesAfter, now, admitted ? 3 * this.#index.shard(shard).size + 1 : HAND_STEPS)
    if (victim < 0) return false
    const victimId = this.#ids[victim]!
    const sketch = this.#filter()
    if (!admitted && !this.#victimReclaimable && sketch.frequency(hash) <= this.#worthOf(victim, sketch)) {
      this.#visited[victim] = Math.min((this.#visited[victim]! >>> 1) + 1, MAX_REFUSALS) << 1
      return false
    }
    this.#index.deleteIn(shard, victimId)
    this.#release(victim)
    return true
  }

  /**
   * The slot the hand of `shard` stops at within `steps` rows (-1: none), clearing the visited bits
   * it passes and counting them in the filter. It passes over a tombstone whose forget time is after
   * `keepTombstonesAfter` (it may still fence a running flight), and stops at the first row that is
   * reclaimable at `now` (what the sweeper would reclaim: see {@link #reclaimAtSlot}; a row within
   * its grace holds a graced value and is not), visited or not, or else unvisited; after `steps`
   * rows without one, at the last visited row it cleared (-1: none). Sets {@link #victimReclaimable}
   * (a reclaimable victim goes without the admission test: expired rows go first) and {@link #walked}.
   */
  #victim(shard: number, keepTombstonesAfter: number, now: number, steps: number): number {
    const visited = this.#visited
    const expires = this.#expires
    let candidate = -1
    this.#victimReclaimable = false
    for (let step = 0; step < steps; step++) {
      let next = (this.#hands[shard] ??= this.#index.shard(shard).values()).next()
      if (next.done === true) next = (this.#hands[shard] = this.#index.shard(shard).values()).next()
      if (next.done === true) {
        this.#walked = step
        return candidate
      }
      const slot = next.value
      if (expires[slot]! < 0 && -expires[slot]! > keepTombstonesAfter && this.#fencesNothing?.[slot] !== 1) continue // may fence a flight
      if (this.#reclaimAtSlot(slot) <= now) this.#victimReclaimable = true
      else if ((visited[slot]! & 1) !== 0) {
        visited[slot] = 0
        this.#filter().increment(hashId(this.#ids[slot]!))
        candidate = slot
        continue
      }
      this.#walked = step + 1
      return slot
    }
    this.#walked = steps
    return candidate
  }

  /** The slot of `id`'s row (or tombstone), -1 when it has none: a handle for the `…At` reads, valid until the next write or removal. */
  find(id: Id): number {
    return this.#index.get(id) ?? -1
  }

  /**
   * A proof that `id` has no slot, for {@link findAbsent}: the count of ids added to the index when
   * the last {@link live} found none for `id`, if no id was added since; -1 otherwise (no proof).
   */
  absence(id: Id): number {
    return this.#absent === id && this.#absentAt === this.#inserts ? this.#inserts : -1
  }

  /**
   * {@link find}, given `absence` (from {@link absence}, or -1): while no id was added to the index
   * since that proof was taken, `id` still has no slot (an id gains one only by being added), so
   * the answer is -1 with no lookup.
   */
  findAbsent(id: Id, absence: number): number {
    return absence === this.#inserts ? -1 : this.find(id)
  }

  /** The value of the row at `slot` (from {@link find}) if it is live at `now`, else {@link NOT_LIVE}. */
  liveAt(slot: number, now: number): V | undefined | typeof NOT_LIVE {
    return slot >= 0 && this.#expires[slot]! > now && (this.#tagKeys === undefined || this.#fresh(slot)) ? this.#values[slot] : NOT_LIVE
  }

  /** The version of the row or tombstone at `slot` (from {@link find}); -1 for no row. */
  versionAt(slot: number): number {
    return slot < 0 ? -1 : this.#versions === undefined ? 0 : this.#versions[slot]!
  }

  /** True when `slot` (from an earlier {@link find}) still holds `id`'s row (or tombstone): the slot was not freed since. */
  holdsAt(slot: number, id: Id): boolean {
    return this.#ids[slot] === id
  }

  /** True when `id` has a row (or a tombstone). */
  has(id: Id): boolean {
    return this.#index.get(id) !== undefined
  }

  /** The version of `id`'s row or tombstone; -1 when it has none. */
  version(id: Id): number {
    return this.versionAt(this.find(id))
  }

  /**
   * Writes the row for `id` (whose slot, from {@link find}, the caller may pass to save a lookup),
   * with the tag keys it carries and its birth, if any, and its `weight` (with a `maxSize`: the
   * caller made room for it, see {@link needsRoom}). Returns the write's stamp, a number ≥ 0 that
   * no later write of any row shares until 2^32 more writes (see {@link RowStore.holds}); or -1,
   * writing nothing, when `id` has no row and the store is full.
   */
  write(id: Id, value: V | undefined, expiresAt: number, version: number, found: number = this.find(id), tags?: { keys: readonly string[]; born: number }, weight = 0): number {
    let slot = found
    let shard: number
    if (slot < 0) {
      if (this.#size >= this.#capacity) return -1
      slot = this.#take()
      this.#visited[slot] = 0
      shard = this.#index.set(id, slot)
      this.#inserts++
      this.#ids[slot] = id
      this.#size++
    } else {
      shard = this.#index.shardOf(id)
    }
    this.#bound(shard, this.#reclaimAt(expiresAt))
    this.#values[slot] = value
    if (this.#weights !== undefined) {
      this.#weight += weight - this.#weights[slot]!
      this.#weights[slot] = weight
    }
    this.#expires[slot] = expiresAt
    if (this.#fencesNothing !== undefined) this.#fencesNothing[slot] = 0
    if (this.#versions !== undefined) this.#versions[slot] = version
    else if (version !== 0) (this.#versions = new Float64Array(this.#expires.length))[slot] = version
    if (this.#grace > 0) this.#retryAt[slot] = 0
    if (tags !== undefined) {
      if (this.#tagKeys === undefined) this.#makeTagColumns()
      this.#tagKeys![slot] = tags.keys
      this.#born[slot] = tags.born
      this.#checked[slot] = -1
    } else if (this.#tagKeys !== undefined) {
      this.#tagKeys[slot] = undefined
      this.#born[slot] = Number.POSITIVE_INFINITY
    }
    this.#stamp = (this.#stamp + 1) >>> 0
    this.#stamps[slot] = this.#stamp
    return this.#stamp
  }

  /** Makes the tag columns, as long as the others. */
  #makeTagColumns(): void {
    if (this.#tags === undefined) throw new Error('echostore: a tagged row needs the table\u2019s tag versions')
    this.#tagKeys = new Array<readonly string[] | undefined>(this.#expires.length).fill(undefined)
    this.#born = new Float64Array(this.#expires.length).fill(Number.POSITIVE_INFINITY)
    this.#checked = new Float64Array(this.#expires.length).fill(-1)
  }

  /**
   * Replaces `id`'s row with a tombstone remembering `version` until `forgetAt`; returns as
   * {@link RowStore.write}. `fences`: false for a tombstone of an id with nothing to fence (no row,
   * flight or put of it): it is never young, and the hands take it as they take a row.
   */
  bury(id: Id, version: number, forgetAt: number, fences = true): number {
    const stamp = this.write(id, undefined, -forgetAt, version)
    if (!fences && stamp >= 0) (this.#fencesNothing ??= new Uint8Array(this.#expires.length))[this.#index.get(id)!] = 1
    return stamp
  }

  /** True when `id`'s row is still the one the write stamped `stamp` wrote: nothing replaced or removed it since. */
  holds(id: Id, stamp: number): boolean {
    const slot = this.#index.get(id)
    return slot !== undefined && this.#stamps[slot] === stamp
  }

  /** Removes `id`'s row, if any. */
  delete(id: Id): void {
    const slot = this.#index.get(id)
    if (slot === undefined) return
    this.#index.delete(id)
    this.#hands[this.#index.shardOf(id)] = undefined
    this.#release(slot)
  }

  /** Removes every row and gives the columns' memory back (stamps go on counting). */
  clear(): void {
    this.#index.clear()
    this.#hands.fill(undefined)
    this.#earliest.fill(Number.POSITIVE_INFINITY)
    this.#latest.fill(Number.NEGATIVE_INFINITY)
    this.#size = 0
    this.#weight = 0
    this.#free = -1
    this.#used = 0
    this.#versions = undefined
    this.#tagKeys = undefined
    this.#allocate(0)
  }

  /**
   * One slice of a sweep pass: removes the rows whose expiry plus the grace (a tombstone: its
   * forget time) is not after `now`, walking the cursor's shards one at a time in insertion order.
   * A shard of at most {@link REBUILD_ROWS} rows that is wholly reclaimable (by its latest reclaim
   * time) is dropped whole; one the cursor may put off (see {@link SweepCursor.putOff}) is left for
   * a later walk; one with no reclaimable row (by its earliest reclaim time) is passed over without
   * a walk; one that is mostly reclaimable is rebuilt from its survivors in one step (one `Map`
   * dropped whole, no per-row delete, no rehash); otherwise its reclaimable rows are deleted
   * one by one, at most `budget` rows walked per slice (plus, for each shard the slice starts, one
   * walk counting its reclaimable rows). A slice also stops once `deadline` (a `performance.now()`
   * instant) has passed, checked every 16 rows and after each shard dropped or rebuilt, so it stays
   * short even before the JIT has compiled it. Returns how many rows it removed; `cursor.done`
   * turns true when the pass has walked every shard.
   */
  sweep(cursor: SweepCursor, now: number, budget: number, deadline = Number.POSITIVE_INFINITY): number {
    if (this.#tagKeys !== undefined && this.#boundsEpoch !== this.#tags!.epoch) {
      // A tag was invalidated since the bounds were made: any shard may hold rows stale by it now.
      this.#earliest.fill(Number.NEGATIVE_INFINITY)
      this.#boundsEpoch = this.#tags!.epoch
    }
    const index = this.#index
    const ids = this.#ids
    const shards = cursor.shards
    const end = shards === undefined ? index.shards : shards.length
    let swept = 0
    let left = budget
    while (left > 0 && cursor.shard < end) {
      const at = shards === undefined ? cursor.shard : shards[cursor.shard]!
      if (cursor.slots === undefined) {
        const shard = index.shard(at)
        if (shard.size > left && left < budget) break // a shard starts a slice of its own when it does not fit the rest of this one
        const small = shard.size <= REBUILD_ROWS
        if (shard.size > 0 && small && this.#latest[at]! <= now) {
          left -= shard.size
          swept += this.#rebuild(at, now, true)
          cursor.shard++
          if (performance.now() > deadline) break
          continue
        }
        if (shard.size > 0 && small && cursor.putOff !== undefined && this.#latest[at]! <= cursor.wholeBy && this.#earliest[at]! >= cursor.dueSince) {
          cursor.putOff.push(at)
          cursor.shard++
          continue
        }
        if (shard.size === 0 || this.#earliest[at]! > now) {
          cursor.shard++
          continue
        }
        const count = this.#countReclaimable(shard, now)
        if (count * 2 >= shard.size && small) {
          left -= shard.size
          swept += this.#rebuild(at, now, false)
          cursor.shard++
          if (performance.now() > deadline) break
          continue
        }
        this.#earliest[at] = Number.POSITIVE_INFINITY // made exact by this walk (and lowered by writes meanwhile)
        this.#latest[at] = Number.NEGATIVE_INFINITY
        cursor.slots = shard.values()
      }
      const slots = cursor.slots
      for (let next = slots.next(); ; next = slots.next()) {
        if (next.done === true) {
          cursor.shard++
          cursor.slots = undefined
          break
        }
        const slot = next.value
        const reclaimAt = this.#reclaimAtSlot(slot)
        if (reclaimAt <= now) {
          index.deleteIn(at, ids[slot]!)
          this.#release(slot)
          this.#hands[at] = undefined // the shard has room again; a parked hand would keep its map's old tables (see `#hands`)
          swept++
        } else {
          this.#bound(at, reclaimAt)
        }
        if (--left === 0 || ((left & 15) === 0 && performance.now() > deadline)) {
          left = 0
          break
        }
      }
    }
    cursor.done = cursor.shard >= end
    return swept
  }

  /** How many rows of `shard` the sweeper may reclaim at `now`. */
  #countReclaimable(shard: ReadonlyMap<Id, number>, now: number): number {
    let count = 0
    for (const slot of shard.values()) if (this.#reclaimAtSlot(slot) <= now) count++
    return count
  }

  /**
   * Replaces shard `shard` by a new `Map` of its rows that are not reclaimable at `now` (none when
   * `whole`: the caller knows every row is), releasing the others; returns how many it released.
   */
  #rebuild(shard: number, now: number, whole: boolean): number {
    const ids = this.#ids
    const kept = new Map<Id, number>()
    let released = 0
    this.#earliest[shard] = Number.POSITIVE_INFINITY
    this.#latest[shard] = Number.NEGATIVE_INFINITY
    for (const slot of this.#index.shard(shard).values()) {
      const reclaimAt = whole ? now : this.#reclaimAtSlot(slot)
      if (reclaimAt <= now) {
        this.#release(slot)
        released++
      } else {
        kept.set(ids[slot]!, slot)
        this.#bound(shard, reclaimAt)
      }
    }
    this.#index.replace(shard, kept)
    this.#hands[shard] = undefined
    return released
  }

  /** Widens shard `shard`'s reclaim bounds to take in a row reclaimable at `reclaimAt`. */
  #bound(shard: number, reclaimAt: number): void {
    if (reclaimAt < this.#earliest[shard]!) this.#earliest[shard] = reclaimAt
    if (reclaimAt > this.#latest[shard]!) this.#latest[shard] = reclaimAt
  }

  /** When a row whose expiry column holds `expiresAt` becomes reclaimable: its expiry plus the grace, or a tombstone's forget time. */
  #reclaimAt(expiresAt: number): number {
    return expiresAt > 0 ? expiresAt + this.#grace : -expiresAt
  }

  /** When the row at `slot` becomes reclaimable (see {@link #reclaimAt}); at once (−∞) for a value or negative row older than one of its tags. */
  #reclaimAtSlot(slot: number): number {
    const expiresAt = this.#expires[slot]!
    if (this.#tagKeys !== undefined && expiresAt > 0 && !this.#fresh(slot)) return Number.NEGATIVE_INFINITY
    return this.#reclaimAt(expiresAt)
  }

  #release(slot: number): void {
    this.#ids[slot] = undefined
    this.#values[slot] = undefined // the value can be collected
    if (this.#weights !== undefined) {
      this.#weight -= this.#weights[slot]!
      this.#weights[slot] = 0
    }
    if (this.#tagKeys !== undefined) {
      this.#tagKeys[slot] = undefined
      this.#born[slot] = Number.POSITIVE_INFINITY
    }
    this.#stamps[slot] = this.#free + 1
    this.#free = slot
    this.#size--
  }

  /** A slot for a new row: a freed one, else the next unused one (growing the columns when none is left). */
  #take(): number {
    const slot = this.#free
    if (slot >= 0) {
      this.#free = this.#stamps[slot]! - 1
      return slot
    }
    if (this.#used === this.#expires.length) this.#allocate(Math.min(this.#capacity, Math.max(FIRST_SLOTS, 2 * this.#used)))
    return this.#used++
  }

  /** Replaces every column with one of `length` cells, keeping the first `#used`. */
  #allocate(length: number): void {
    this.#ids = grown(this.#ids, length, this.#used)
    this.#values = grown(this.#values, length, this.#used)
    this.#expires = copied(new Float64Array(length), this.#expires, this.#used)
    if (this.#versions !== undefined) this.#versions = copied(new Float64Array(length), this.#versions, this.#used)
    if (this.#fencesNothing !== undefined) this.#fencesNothing = copied(new Uint8Array(length), this.#fencesNothing, this.#used)
    this.#stamps = copied(new Uint32Array(length), this.#stamps, this.#used)
    this.#visited = copied(new Uint8Array(length), this.#visited, this.#used)
    if (this.#weights !== undefined) this.#weights = copied(new Float64Array(length), this.#weights, this.#used)
    if (this.#grace > 0) this.#retryAt = copied(new Float64Array(length), this.#retryAt, this.#used)
    if (this.#tagKeys !== undefined) {
      this.#tagKeys = grown(this.#tagKeys, length, this.#used)
      this.#born = copied(new Float64Array(length), this.#born, this.#used)
      this.#checked = copied(new Float64Array(length), this.#checked, this.#used)
    }
  }
}

function grown<T>(old: (T | undefined)[], length: number, used: number): (T | undefined)[] {
  const next = new Array<T | undefined>(length).fill(undefined)
  for (let slot = 0; slot < used; slot++) next[slot] = old[slot]
  return next
}

function copied<T extends Float64Array | Uint32Array | Uint8Array>(next: T, old: T, used: number): T {
  next.set(old.subarray(0, used))
  return next
}
