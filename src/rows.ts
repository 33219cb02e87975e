/**
 * A row and its jittered expiry. Pure functions; the owner is the only writer of rows,
 * the hit path only reads them.
 */

/**
 * One cached row. `value === undefined` marks a negative row ("the loader found nothing").
 * A tombstone (see {@link tombstone}) is a row that never answers a hit but remembers a version.
 */
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

/**
 * A row that answers no hit but remembers the version of an invalidation, to fence older writes,
 * until `forgetAt`. Its `expiresAt` is `-forgetAt`: never ahead of a (non-negative) clock, so the
 * hit path treats it as a miss with no extra check, while the sweeper still knows when to forget it.
 */
export function tombstone<V>(version: number, forgetAt: number): Row<V> {
  return new Row<V>(undefined, -forgetAt, version)
}

/** When the sweeper may reclaim `row`: its expiry, or a tombstone's forget time. */
export function reclaimAt(row: Row<unknown>): number {
  return row.expiresAt > 0 ? row.expiresAt : -row.expiresAt
}

/** Draws expiries for a table: values live `ttl`, negative rows `negativeTtl`, both jittered. */
export interface Expiry {
  /** When a row for `value` written at `now` expires, or `undefined` when it must not be cached (negativeTtl 0). */
  draw(value: unknown, now: number): number | undefined
}

/** The expiry policy of a table's options. */
export function expiryPolicy(ttl: number, negativeTtl: number, jitter: number, random: () => number): Expiry {
  const spread = jitterSpread(ttl, jitter)
  const negativeSpread = jitterSpread(negativeTtl, jitter)
  return {
    draw(value, now) {
      if (value !== undefined) return jitteredExpiry(now, ttl, spread, random)
      return negativeTtl === 0 ? undefined : jitteredExpiry(now, negativeTtl, negativeSpread, random)
    },
  }
}
