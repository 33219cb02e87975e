/*
 * The table's counters: one Float64Array, one named slot per counter, bumped in place. Written by
 * the table facade (hits, misses, negative_hits, cancelled, bus_errors, coh_invalid), the L2 facade
 * (l2_*), the running flight (loads) and the owner (everything else); read by `stats()`, which
 * copies them into a frozen snapshot.
 */

/** Every counter's name, in the order of their slots (and of `stats()`'s keys). */
export const COUNTER_NAMES = [
  'hits',
  'misses',
  'negative_hits',
  'coalesced',
  'flights',
  'fills',
  'l2_hits',
  'loads',
  'load_errors',
  'abandoned',
  'full_skips',
  'swept',
  'sweeps',
  'fenced',
  'timeouts',
  'cancelled',
  'l2_errors',
  'l2_timeouts',
  'l2_skipped',
  'l2_corrupt',
  'coh_applied',
  'coh_stale',
  'coh_invalid',
  'coh_gaps',
  'coh_dropped',
  'bus_errors',
] as const

/** A counter's name. */
export type CounterName = (typeof COUNTER_NAMES)[number]

/** Slot index of each counter in the array. */
export const C = Object.fromEntries(COUNTER_NAMES.map((name, slot) => [name, slot])) as { readonly [K in CounterName]: number }

/** A fresh zeroed counters array. */
export function newCounters(): Float64Array {
  return new Float64Array(COUNTER_NAMES.length)
}

/** A table's stats: every counter, plus what is true now. */
export type Stats = { readonly [K in CounterName]: number } & {
  /** Rows held now (expired rows count until swept or replaced). */
  readonly size: number
  /** Flights in progress now. */
  readonly inflight: number
  /** `hits / (hits + misses)`, 0 before any read. */
  readonly hit_rate: number
}

/** A frozen snapshot of the counters and the live gauges. */
export function snapshot(counters: Float64Array, size: number, inflight: number): Stats {
  const out: Record<string, number> = {}
  for (let slot = 0; slot < COUNTER_NAMES.length; slot++) out[COUNTER_NAMES[slot]!] = counters[slot]!
  const reads = counters[C.hits]! + counters[C.misses]!
  out.size = size
  out.inflight = inflight
  out.hit_rate = reads === 0 ? 0 : counters[C.hits]! / reads
  return Object.freeze(out) as Stats
}
