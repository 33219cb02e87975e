import type { Id } from './id.js'

/** Slots the columns get on the first write (or the capacity, if smaller); they double from there. */
const FIRST_SLOTS = 1_024

/**
 * A table's rows, stored in columns: a `Map` from id to a slot, and one array per field, indexed by
 * slot, so a row costs a Map entry and a cell in each column, never an object of its own. It holds
 * at most `capacity` rows; the columns grow by doubling, never past it, and a freed slot is reused
 * before a new one.
 *
 * A negative row ("the loader found nothing") holds the value `undefined`. A tombstone (see
 * {@link RowStore.bury}) answers no hit but remembers a version until its forget time.
 *
 * Written only by the owner, through the methods (the sweeper reclaims on the owner's behalf). The
 * hit path only reads: `slots`, then `expires` and `values` at the slot.
 */
export class RowStore<V> {
  /** The slot of each id's row. */
  readonly slots = new Map<Id, number>()
  /** Per slot: the value; `undefined` for a negative row, a tombstone or a free slot. Replaced when the columns grow. */
  values: (V | undefined)[] = []
  /**
   * Per slot: the clock time at which the row stops answering hits. A tombstone holds `-forgetAt`:
   * never ahead of a (non-negative) clock, so `expires[slot] > now` is the hit path's only check.
   * Replaced when the columns grow.
   */
  expires = new Float64Array(0)
  /** Per slot: the version of what the row holds (0 when unknown); a free slot holds the next free slot instead. */
  private versions = new Float64Array(0)
  /** Per slot: the stamp of the write that wrote the row (see {@link RowStore.set}). */
  private stamps = new Uint32Array(0)
  /** The last stamp handed out: counts the store's writes, wrapping at 2^32. */
  private stamp = 0
  /** The first free slot (-1: none); each free slot links to the next through `versions`. */
  private free = -1
  /** Slots handed out so far; the columns' cells from here on were never used. */
  private used = 0

  constructor(
    /** Most rows held at once. */
    private readonly capacity: number,
  ) {}

  /** Rows held, tombstones included. */
  get size(): number {
    return this.slots.size
  }

  /** True when `id` has a row (or a tombstone). */
  has(id: Id): boolean {
    return this.slots.has(id)
  }

  /** The version of `id`'s row or tombstone; -1 when it has none. */
  version(id: Id): number {
    const slot = this.slots.get(id)
    return slot === undefined ? -1 : this.versions[slot]!
  }

  /**
   * Writes the row for `id`. Returns the write's stamp, a number ≥ 0 that no later write of any row
   * shares until 2^32 more writes (see {@link RowStore.holds}); or -1, writing nothing, when `id`
   * has no row and the store is full.
   */
  set(id: Id, value: V | undefined, expiresAt: number, version: number): number {
    let slot = this.slots.get(id)
    if (slot === undefined) {
      if (this.slots.size >= this.capacity) return -1
      slot = this.take()
      this.slots.set(id, slot)
    }
    this.values[slot] = value
    this.expires[slot] = expiresAt
    this.versions[slot] = version
    this.stamp = (this.stamp + 1) >>> 0
    this.stamps[slot] = this.stamp
    return this.stamp
  }

  /** Replaces `id`'s row with a tombstone remembering `version` until `forgetAt`; returns as {@link RowStore.set}. */
  bury(id: Id, version: number, forgetAt: number): number {
    return this.set(id, undefined, -forgetAt, version)
  }

  /** True when `id`'s row is still the one the write stamped `stamp` wrote: nothing replaced or removed it since. */
  holds(id: Id, stamp: number): boolean {
    const slot = this.slots.get(id)
    return slot !== undefined && this.stamps[slot] === stamp
  }

  /** Removes `id`'s row, if any. */
  delete(id: Id): void {
    const slot = this.slots.get(id)
    if (slot === undefined) return
    this.slots.delete(id)
    this.release(slot)
  }

  /**
   * Removes `id`'s row if the sweeper may reclaim it at `now`: its expiry, or a tombstone's forget
   * time, is not after `now`. Returns true when it removed it.
   */
  reclaim(id: Id, now: number): boolean {
    const slot = this.slots.get(id)
    if (slot === undefined) return false
    const expiresAt = this.expires[slot]!
    if ((expiresAt > 0 ? expiresAt : -expiresAt) > now) return false
    this.slots.delete(id)
    this.release(slot)
    return true
  }

  /** Removes every row and gives the columns' memory back (stamps go on counting). */
  clear(): void {
    this.slots.clear()
    this.free = -1
    this.used = 0
    this.allocate(0)
  }

  private release(slot: number): void {
    this.values[slot] = undefined // the value can be collected
    this.versions[slot] = this.free
    this.free = slot
  }

  /** A slot for a new row: a freed one, else the next unused one (growing the columns when none is left). */
  private take(): number {
    const slot = this.free
    if (slot >= 0) {
      this.free = this.versions[slot]!
      return slot
    }
    if (this.used === this.expires.length) this.allocate(Math.min(this.capacity, Math.max(FIRST_SLOTS, 2 * this.used)))
    return this.used++
  }

  /** Replaces every column with one of `length` cells, keeping the first `used`. */
  private allocate(length: number): void {
    const values = new Array<V | undefined>(length).fill(undefined)
    for (let slot = 0; slot < this.used; slot++) values[slot] = this.values[slot]
    this.values = values
    this.expires = copied(new Float64Array(length), this.expires, this.used)
    this.versions = copied(new Float64Array(length), this.versions, this.used)
    this.stamps = copied(new Uint32Array(length), this.stamps, this.used)
  }
}

function copied<T extends Float64Array | Uint32Array>(next: T, old: T, used: number): T {
  next.set(old.subarray(0, used))
  return next
}
