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
  'coh_gaps',
  'coh_dropped',
  'bus_errors',
  'clears',
  'lease_acquired',
  'lease_waited',
  'lease_lost',
  'batch_loads',
  'batch_ids',
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

/** A table's stats: every counter, plus what is true now. */
export type Stats = { readonly [K in CounterName]: number } & {
  /** Rows held now (expired rows count until swept or replaced). */
  readonly size: number
  /** Flights in progress now. */
  readonly inflight: number
  /** `hits / (hits + misses)`, 0 before any read. */
  readonly hit_rate: number
}

/** A frozen snapshot of both counter arrays and the live gauges. */
export function snapshot(reads: Float64Array, counters: Float64Array, size: number, inflight: number): Stats {
  const out: Record<string, number> = {}
  for (let slot = 0; slot < READ_COUNTER_NAMES.length; slot++) out[READ_COUNTER_NAMES[slot]!] = reads[slot]!
  for (let slot = 0; slot < OWNER_COUNTER_NAMES.length; slot++) out[OWNER_COUNTER_NAMES[slot]!] = counters[slot]!
  const total = reads[R.hits]! + reads[R.misses]!
  out['size'] = size
  out['inflight'] = inflight
  out['hit_rate'] = total === 0 ? 0 : reads[R.hits]! / total
  return Object.freeze(out) as Stats
}
