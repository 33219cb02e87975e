/**
 * A row and its jittered expiry. Pure functions; the owner is the only writer of rows,
 * the hit path only reads them.
 */

/** One cached row. `value === undefined` marks a negative row ("the loader found nothing"). */
export class Row<V> {
  constructor(
    /** The value, or `undefined` for a negative row. */
    readonly value: V | undefined,
    /** Clock time at which the row stops answering hits. */
    readonly expiresAt: number,
    /** The version of what the row holds (0 when unknown). */
    readonly version: number,
  ) {}
}

/** The half-width of the expiry band: `trunc(ttl · jitter)`. */
export function jitterSpread(ttl: number, jitter: number): number {
  return Math.trunc(ttl * jitter)
}

/**
 * The expiry of a row written at `now`: `now + ttl + offset`, with `offset` an integer drawn
 * uniformly from `[-spread, +spread]` using `random` (a `Math.random`-like source in [0, 1)).
 */
export function jitteredExpiry(now: number, ttl: number, spread: number, random: () => number): number {
  if (spread === 0) return now + ttl
  const offset = Math.min(2 * spread, Math.floor(random() * (2 * spread + 1))) - spread
  return now + ttl + offset
}
