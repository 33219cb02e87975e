import type { Id } from '../core/id.js'

/** A table of at most this many rows has one shard and hashes nothing: rebuilding or rehashing it takes a few milliseconds at most. */
export const SINGLE_SHARD_ROWS = 131_072
/** Rows per shard the index aims for at full capacity, once it has several: as many as one sweep slice walks, so a mostly expired shard is rebuilt in one slice. */
export const SHARD_ROWS = 2_048
/** Most shards an index has, whatever the capacity (about 8M rows at {@link SHARD_ROWS} each). */
const MAX_SHARDS = 4_096

/**
 * The id → slot index of a table's rows: `Map`s, one per shard, the shard chosen by a hash of the
 * id. V8 grows and shrinks a `Map`'s hash table in one step, copying every entry; one `Map` of a
 * million ids pauses the event loop ~20 ms when it shrinks. Split into shards of about
 * {@link SHARD_ROWS} rows at capacity, each step copies one shard. The sweeper walks a shard at a
 * time (see {@link IdIndex.shard}) and rebuilds a mostly expired shard whole (see
 * {@link IdIndex.replace}), so shards never shrink together.
 *
 * A table of at most {@link SINGLE_SHARD_ROWS} rows (the default capacity included) has one shard and
 * hashes nothing. Larger ones hash each id: a string's length and up to its first and last 16 code
 * units (ids that differ only in between share a shard, which costs pause length, never
 * correctness), a number's integer and fraction bits.
 */
export class IdIndex {
  /** The shards (and `#single`): written only by their `RowStore`, through `set`, `delete`, `deleteIn`, `replace` and `clear`. */
  readonly #shards: Map<Id, number>[]
  /** `shards − 1`; 0 when there is one shard. */
  readonly #mask: number
  /** The one shard, when there is one: lookups skip the hash. */
  #single: Map<Id, number> | undefined

  constructor(capacity: number) {
    const wanted = capacity <= SINGLE_SHARD_ROWS ? 1 : Math.min(MAX_SHARDS, Math.ceil(capacity / SHARD_ROWS))
    const count = wanted <= 1 ? 1 : 2 ** Math.ceil(Math.log2(wanted))
    this.#shards = Array.from({ length: count }, () => new Map<Id, number>())
    this.#mask = count - 1
    this.#single = count === 1 ? this.#shards[0] : undefined
  }

  /** How many shards the index has (a power of two). */
  get shards(): number {
    return this.#shards.length
  }

  /** The shard `id` lives in. */
  shardOf(id: Id): number {
    return this.#mask === 0 ? 0 : hashId(id) & this.#mask
  }

  /** The shard at `index`, for walking in insertion order; only the index writes it. */
  shard(index: number): ReadonlyMap<Id, number> {
    return this.#shards[index]!
  }

  /** The slot of `id`, or `undefined`. */
  get(id: Id): number | undefined {
    const single = this.#single
    return single !== undefined ? single.get(id) : this.#shards[hashId(id) & this.#mask]!.get(id)
  }

  /** Maps `id` to `slot` (a new id goes last in its shard's insertion order); returns the shard it lives in. */
  set(id: Id, slot: number): number {
    const shard = this.shardOf(id)
    this.#shards[shard]!.set(id, slot)
    return shard
  }

  /** Removes `id`; false when it was not there. */
  delete(id: Id): boolean {
    return this.#shards[this.shardOf(id)]!.delete(id)
  }

  /** Puts `map` in place of shard `shard` (the sweeper's rebuild of a mostly expired shard); its ids must belong to that shard. */
  replace(shard: number, map: Map<Id, number>): void {
    this.#shards[shard] = map
    if (this.#single !== undefined) this.#single = map
  }

  /** Removes `id` from the shard it is known to live in (a walker of that shard): no hash. */
  deleteIn(shard: number, id: Id): void {
    this.#shards[shard]!.delete(id)
  }

  /** Removes every id. */
  clear(): void {
    for (const shard of this.#shards) shard.clear()
  }
}

/** A 32-bit hash of an id: FNV-1a over a string's length and up to 32 of its code units; a number's integer and fraction bits. */
export function hashId(id: Id): number {
  let h: number
  if (typeof id === 'number') {
    h = (id | 0) ^ Math.imul(((id - Math.floor(id)) * 4_294_967_296) | 0, 0x9e3779b1)
  } else if (typeof id !== 'string') {
    return 0 // not an id: the caller looks it up and finds nothing
  } else {
    const n = id.length
    h = Math.imul(0x811c9dc5 ^ n, 0x01000193)
    for (let i = n > 16 ? n - 16 : 0; i < n; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193)
    for (let i = 0; i < 16 && i < n - 16; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193)
  }
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  return h ^ (h >>> 13)
}
