/**
 * Versions: what orders the changes of one id. A version is a safe integer in [0, MAX_VERSION];
 * 0 means "unknown". A change without a version of its own gets a hybrid logical clock version:
 * the wall-clock millisecond times 1,024, plus a counter, and always above every version already
 * known for the id, so one writer's changes are strictly ordered and a later change by any writer
 * gets a larger version unless the writers' clocks disagree by more than the time between the
 * changes. Where an L2 is set, its script mints the version atomically (`max(last issued + 1,
 * held + 1, floor)`), so two writers sharing it never mint the same one.
 *
 * Versions of two sources: the data's own (a row version, an `updated_at` in ms: what a change's
 * `{ version }` or a loader's `setVersion` gives, below {@link CLOCK_VERSIONS_FROM}) and minted ones.
 * This module is the one place that orders them. A change without a version, on an id whose known
 * version is the data's, takes the next one in the data's order (`known + 1`: it fences every load
 * of the data it knew, and the data's next version replaces it). Where that was not known (a
 * process that never read the id minted a clock version), a version the data gives below a minted
 * one is refused with a `RangeError` saying how to fix it ({@link checkDataVersion}), never silently.
 */
import { badArgument } from './errors.js'

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
 * The clock version of 2020-01-01: clock versions minted on a real clock are at or above it, and a
 * version below it (but 0, "unknown") that an id holds is the data's own.
 */
export const CLOCK_VERSIONS_FROM = clockVersion(Date.UTC(2020, 0, 1))

/** True for a version the data gave: above 0 ("unknown") and below {@link CLOCK_VERSIONS_FROM}. */
function isDataVersion(version: number): boolean {
  return version > 0 && version < CLOCK_VERSIONS_FROM
}

/**
 * The version a change minted here takes: above `known` (the highest version known for the id,
 * -1 for none) and at least 1 (0 is "unknown"); the next one in the data's order when `known` is
 * the data's own, else no lower than the clock version of `now`. `undefined` when `known` is already
 * {@link MAX_VERSION}: no larger version exists, and the change must be refused.
 */
export function mintVersion(known: number, now: number): number | undefined {
  const version = isDataVersion(known) ? known + 1 : Math.max(known + 1, clockVersion(now), 1)
  return version <= MAX_VERSION ? version : undefined
}

/**
 * `given`, a version the data gave (a change's `{ version }`, a loader's `setVersion`; `where`
 * names the call), unless it is below a minted clock version the id holds (`held`): that one came
 * from a change without a version in a process that did not know the id's data version, and every
 * version the data gives would be refused below it, silently, until it is forgotten. That mix is
 * refused with a `RangeError` saying how to fix it.
 */
export function checkDataVersion(given: number, held: number, where: string): number {
  if (given >= CLOCK_VERSIONS_FROM || held < CLOCK_VERSIONS_FROM) return given
  throw badArgument(
    RangeError,
    `${where}: version ${given} is the data's own, but the id holds version ${held}, minted by a change without a version (invalidate(id) or put(id, value) without { version }) in a process that did not know the id's version: give every change of this table a version (invalidate(id, { version: row.version })), or give none anywhere`,
  )
}

/**
 * A table's version clock: what orders a row's birth (the reading when its load started, or its put)
 * against a tag's invalidation, so a row is stale once one of its tags was invalidated at or after
 * its birth (see `tags/tag-versions.ts`). Its readings are hybrid logical clock readings, as minted
 * id versions are: the clock's millisecond × {@link PER_MS}, kept strictly growing here, and raised
 * by every version the table learns of (a put's birth, an invalidation from its L2's tag keys or the
 * bus). Within one process the order is exact; across processes an invalidation takes the last
 * version of its millisecond (see {@link floor}), so a row another process loaded before it, in the
 * same millisecond or earlier, is older whatever that process's counter reached; beyond that (clocks
 * that disagree, an invalidation not heard of yet) a load that races an invalidation elsewhere is
 * judged by the two clocks, and its flight is fenced anyway as soon as the bus delivers the invalidation.
 *
 * Written only by the owner ({@link tick}, {@link observe}); read by the change path and the flight
 * runners ({@link peek}, {@link floor}).
 */
export class VersionClock {
  /** The last reading: every birth and every floor handed out is above it. */
  #last = 0

  /** A reading at `now`, above every earlier one: a flight's birth. */
  tick(now: number): number {
    this.#last = Math.max(this.#last + 1, clockVersion(now))
    return this.#last
  }

  /** What the next {@link tick} at `now` would answer, without taking it (for a change about to be handed to the owner, a loader being called). */
  peek(now: number): number {
    return Math.max(this.#last + 1, clockVersion(now))
  }

  /**
   * The least version an invalidation at `now` may take: the next reading, rounded up to the last
   * version of its millisecond (the clock's, or the one this table's readings have run on to). A
   * table that heard of an invalidation counts its births from the next millisecond on, and counts
   * them within it: so every birth, on any process whose clock agrees and that heard of the same
   * invalidations, made before this one is older than it, however far that process's counter ran.
   * The readings left in the millisecond are given up: births here go on above it.
   */
  floor(now: number): number {
    const next = this.peek(now)
    return Math.min(MAX_VERSION, next - (next % PER_MS) + PER_MS - 1)
  }

  /** Takes note of a version handed out elsewhere (a put's birth, an invalidation from the bus or L2): later readings are above it. */
  observe(version: number): void {
    if (version > this.#last) this.#last = version
  }
}
