/**
 * Versions: what orders the changes of one id. A version is a safe integer in [0, MAX_VERSION];
 * 0 means "unknown". A change without a version of its own gets a hybrid logical clock version:
 * the wall-clock millisecond times 1,024, plus a counter, and always above every version already
 * known for the id, so one writer's changes are strictly ordered and a later change by any writer
 * gets a larger version unless the writers' clocks disagree by more than the time between the
 * changes. Where an L2 is set, its script mints the version atomically (`max(last issued + 1,
 * held + 1, floor)`), so two writers sharing it never mint the same one.
 */

/** Versions per millisecond: the counter's room in the low bits. */
export const PER_MS = 1_024

/**
 * The largest version any layer accepts (2^52): user versions (a row version, an `updated_at` in ms)
 * and clock versions (milliseconds × 1,024 until the year 2109) both fit, and minting `+ 1` from any
 * accepted version stays a safe integer for 2^52 more changes.
 */
export const MAX_VERSION = 2 ** 52

/** True for a version every layer accepts: an integer in [0, {@link MAX_VERSION}]. */
export function isVersion(version: unknown): version is number {
  return Number.isSafeInteger(version) && (version as number) >= 0 && (version as number) <= MAX_VERSION
}

/** The clock version of an instant: its millisecond times 1,024 (the counter at 0), capped at {@link MAX_VERSION}. */
export function clockVersion(now: number): number {
  return Math.min(MAX_VERSION, Math.floor(now) * PER_MS)
}

/**
 * The version a change minted here takes: above `known` (the highest version known for the id,
 * -1 for none), no lower than the clock version of `now`, and at least 1 (0 is "unknown").
 * `undefined` when `known` is already {@link MAX_VERSION}: no larger version exists, and the change
 * must be refused.
 */
export function mintVersion(known: number, now: number): number | undefined {
  const version = Math.max(known + 1, clockVersion(now), 1)
  return version <= MAX_VERSION ? version : undefined
}
