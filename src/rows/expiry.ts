/**
 * The expiry policy: when a row written now stops answering hits. Values live `ttl`, negative rows
 * `negativeTtl`, both jittered by `ttl ± trunc(ttl·jitter)`. Pure functions; the rows themselves
 * live in `rows/row-store.ts`.
 */

/** The half-width of the expiry band: `trunc(ttl · jitter)`. */
export function jitterSpread(ttl: number, jitter: number): number {
  return Math.trunc(ttl * jitter)
}

/**
 * The expiry of a row written at `now`: `now + ttl + offset`, with `offset` an integer drawn
 * uniformly from `[-spread, +spread]` using `random` (a `Math.random`-like source in [0, 1)), its
 * lifetime cut to `longest` (the longest every layer accepts: a year's `ttl` jittered up is not).
 */
export function jitteredExpiry(now: number, ttl: number, spread: number, random: () => number, longest: number): number {
  if (spread === 0) return now + ttl
  let draw: unknown
  try {
    draw = random()
  } catch {
    draw = Number.NaN // a source that throws after construction: the middle of the band, never a failed write
  }
  // A source that goes bad after construction (NaN, out of range) yields the band's middle, never a row that cannot expire.
  const unit = typeof draw === 'number' && draw >= 0 && draw < 1 ? draw : 0.5
  const offset = Math.min(2 * spread, Math.floor(unit * (2 * spread + 1))) - spread
  return now + Math.min(ttl + offset, longest)
}

/** Draws expiries for a table: values live `ttl`, negative rows `negativeTtl`, both jittered. */
export interface Expiry {
  /**
   * When a row for `value` written at `now` expires, or `undefined` when it must not be cached
   * (negativeTtl 0, or a lifetime of 0 the loader chose). `lifetime`, when given (a loader's
   * `setTtl`), replaces the table's for this row; jitter applies to it the same way.
   */
  draw(value: unknown, now: number, lifetime?: number): number | undefined
}

/** The expiry policy of a table's options; no row lives longer than `longest` (what every layer accepts, L2 included). */
export function expiryPolicy(ttl: number, negativeTtl: number, jitter: number, random: () => number, longest: number): Expiry {
  const spread = jitterSpread(ttl, jitter)
  const negativeSpread = jitterSpread(negativeTtl, jitter)
  return {
    draw(value, now, lifetime) {
      if (lifetime !== undefined) return lifetime === 0 ? undefined : jitteredExpiry(now, lifetime, jitterSpread(lifetime, jitter), random, longest)
      if (value !== undefined) return jitteredExpiry(now, ttl, spread, random, longest)
      return negativeTtl === 0 ? undefined : jitteredExpiry(now, negativeTtl, negativeSpread, random, longest)
    },
  }
}
