/*
 * A table's counters, in two `Float64Array`s with one named slot per counter, bumped in place:
 * the hit path's own (hits, misses, negative_hits), written only by the table facade as it answers
 * a read; and the owner's (everything else), written only by the owner. `stats()` copies both into
 * one frozen snapshot.
 */

/** The counters the hit path bumps itself, in slot order. */
export const READ_COUNTER_NAMES = ['hits', 'misses', 'negative_hits'] as const

/** The counters the owner writes, in slot order. */
export const OWNER_COUNTER_NAMES = [
  'coalesced',
  'flights',
  'fills',
  'l2_hits',
  'loads',
  'load_errors',
  'abandoned',
  'stale_hits',
  'failsafe',
  'full_skips',
  'evictions',
  'heavy_skips',
  'sizeof_errors',
  'swept',
  'sweeps',
  'fenced',
  'timeouts',
  'cancelled',
  'l2_errors',
  'l2_timeouts',
  'l2_skipped',
  'l2_corrupt',
  'l2_oversize',
  'l2_codec_errors',
  'coh_applied',
  'coh_stale',
  'coh_invalid',
  'coh_foreign',
  'coh_gaps',
  'coh_dropped',
  'bus_errors',
  'clears',
  'lease_acquired',
  'lease_waited',
  'lease_lost',
  'batch_loads',
  'batch_ids',
  'tag_invalidations',
  'tag_stale',
] as const

/** Every counter's name, in `stats()` order. */
export const COUNTER_NAMES = [...READ_COUNTER_NAMES, ...OWNER_COUNTER_NAMES] as const

/** A counter's name. */
export type CounterName = (typeof COUNTER_NAMES)[number]
/** A counter the owner writes. */
export type OwnerCounterName = (typeof OWNER_COUNTER_NAMES)[number]

/** Slot of each hit-path counter in its array. */
export const R = { hits: 0, misses: 1, negative_hits: 2 } as const satisfies Record<(typeof READ_COUNTER_NAMES)[number], number>

/** Slot of each owner counter in its array. */
export const C = Object.fromEntries(OWNER_COUNTER_NAMES.map((name, slot) => [name, slot])) as { readonly [K in OwnerCounterName]: number }

/** A fresh zeroed array for the hit path's counters. */
export function newReadCounters(): Float64Array {
  return new Float64Array(READ_COUNTER_NAMES.length)
}

/** A fresh zeroed array for the owner's counters. */
export function newOwnerCounters(): Float64Array {
  return new Float64Array(OWNER_COUNTER_NAMES.length)
}

/**
 * A table's stats: every counter (since the table was made), plus what is true now (`size`,
 * `weight`, `inflight`, `hit_rate`). Extending the record of {@link CounterName}s makes a new counter a key here
 * too (the type tests hold the keys to exactly the counters and the four gauges).
 */
export interface Stats extends Readonly<Record<CounterName, number>> {
  /** Fetches answered from a live row (negative rows included). */
  readonly hits: number
  /** Fetches that found no live row. */
  readonly misses: number
  /** Hits on negative rows (the loader had answered `undefined`). */
  readonly negative_hits: number
  /** Misses that joined a flight already in progress (answers served during a fail-safe back-off included). */
  readonly coalesced: number
  /** Flights started. */
  readonly flights: number
  /** Rows written by completed flights (from L2 or the loader). */
  readonly fills: number
  /** Flights answered by L2 without calling the loader. */
  readonly l2_hits: number
  /** Loader calls: the origin work actually done. */
  readonly loads: number
  /** Flights that ended in an error: the loader threw or rejected, or `loadTimeout` passed (in L2 or in the loader), or with `lease` the holder they waited on failed. */
  readonly load_errors: number
  /** Flights released because every waiter left by cancellation. */
  readonly abandoned: number
  /** Answers served from a graced value (fail-safe, back-off, stale-while-revalidate, soft timeout). */
  readonly stale_hits: number
  /** Failed flights the fail-safe absorbed: a graced value was there, and their waiters got it instead of the error (a forced refresh's own callers get the error); also in `load_errors`. */
  readonly failsafe: number
  /** Completed flights (or puts) for a new id not stored because the table was full and admission refused it. */
  readonly full_skips: number
  /** Rows removed to make room: for a new id, or (with `maxSize`) for a heavier value. */
  readonly evictions: number
  /** Values not stored because `sizeOf` weighed them above `maxSize` (their fetches are still answered). */
  readonly heavy_skips: number
  /** Values not stored because `sizeOf` threw or answered anything but an integer ≥ 0 (each also an `error` event). */
  readonly sizeof_errors: number
  /** Rows reclaimed by the sweeper. */
  readonly swept: number
  /** Sweeper passes. */
  readonly sweeps: number
  /** Flight answers not stored, or dropped once stored, because a newer version was known (a change arrived mid-flight, or L2 holds a newer one). */
  readonly fenced: number
  /** Waiters that left by their deadline. */
  readonly timeouts: number
  /** Waiters that left by their signal (an already-aborted signal counts here too). */
  readonly cancelled: number
  /** L2 calls that failed. */
  readonly l2_errors: number
  /** L2 calls that took longer than the store's `timeout`. */
  readonly l2_timeouts: number
  /** L2 calls not made because the breaker was open. */
  readonly l2_skipped: number
  /** L2 entries that could not be decoded, held another Redis type or a version out of range (read as misses). */
  readonly l2_corrupt: number
  /** L2 entries larger than the store's `maxValueBytes`: neither read nor written. */
  readonly l2_oversize: number
  /** Values the L2 codec could not encode: not written. */
  readonly l2_codec_errors: number
  /** Coherence messages applied. */
  readonly coh_applied: number
  /** Coherence messages dropped as not newer than what was held. */
  readonly coh_stale: number
  /** Malformed bus messages dropped. */
  readonly coh_invalid: number
  /** Bus gaps (messages may have been lost). */
  readonly coh_gaps: number
  /** L1 rows dropped because of bus gaps. */
  readonly coh_dropped: number
  /** Broadcasts that failed to publish. */
  readonly bus_errors: number
  /** Clears of the whole table applied: its own `clear()` calls, and other instances' heard on the bus. */
  readonly clears: number
  /** Flights that took their id's lease at once and loaded it for every process. */
  readonly lease_acquired: number
  /** Flights answered by another process's fill while it held the lease (also `l2_hits`). */
  readonly lease_waited: number
  /** Flights that waited for another process's lease, got no fill in time (its holder died or stalled, or an invalidate voided the lease), and loaded themselves. */
  readonly lease_lost: number
  /** Batch loader calls. */
  readonly batch_loads: number
  /** Ids asked in batch loader calls (each also in `loads`). */
  readonly batch_ids: number
  /** Bus messages of another key space (another L2 `prefix`, or another bus `namespace`, on the same channel), ignored. */
  readonly coh_foreign: number
  /** Tags invalidated: this instance's `invalidateTags` (one per tag), a namespace's `clear()` (one), and those heard on the bus. */
  readonly tag_invalidations: number
  /** Reads that found a row, or an L2 entry, older than one of its tags (never answered: a miss, or an L2 miss). */
  readonly tag_stale: number
  /** Rows held now (expired rows and tombstones count until swept or replaced). */
  readonly size: number
  /** The weight the rows hold now, in the units of `sizeOf` (graced rows count until swept or replaced); 0 without `maxSize`. */
  readonly weight: number
  /** Flights in progress now. */
  readonly inflight: number
  /** `hits / (hits + misses)`, 0 before any read. */
  readonly hit_rate: number
}

/** A frozen snapshot of both counter arrays and the live gauges. */
export function snapshot(reads: Float64Array, counters: Float64Array, size: number, weight: number, inflight: number): Stats {
  const out = {} as Record<keyof Stats, number>
  for (let slot = 0; slot < READ_COUNTER_NAMES.length; slot++) out[READ_COUNTER_NAMES[slot]!] = reads[slot]!
  for (let slot = 0; slot < OWNER_COUNTER_NAMES.length; slot++) out[OWNER_COUNTER_NAMES[slot]!] = counters[slot]!
  const total = reads[R.hits]! + reads[R.misses]!
  out.size = size
  out.weight = weight
  out.inflight = inflight
  out.hit_rate = total === 0 ? 0 : reads[R.hits]! / total
  return Object.freeze(out)
}
