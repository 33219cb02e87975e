/**
 * Tag versions: what makes `invalidateTags` O(1). Invalidating a tag gives it a new version; every
 * row remembers when it was born (the version clock's reading when its load started, or its put),
 * and a row is stale once any of its tag keys holds a version at or above its birth. Nothing walks
 * the rows: a read compares, and the sweeper reclaims what reads no longer answer.
 *
 * The versions are hybrid logical clock readings, as id versions are (see `core/versions.ts`): the
 * clock's millisecond × 1,024, kept strictly growing here, and raised by every version this table
 * learns of (from its L2's tag keys, or the bus). Within one process the order is exact; across
 * processes an invalidation takes the last version of its millisecond (see {@link TagVersions.floor}),
 * so a row another process loaded before it, in the same millisecond or earlier, is older whatever
 * that process's counter reached; beyond that (clocks that disagree, an invalidation not heard of
 * yet) a load that races an invalidation elsewhere is judged by the two clocks, and its flight is
 * fenced anyway as soon as the bus delivers the invalidation.
 */
import { MAX_VERSION, PER_MS, clockVersion } from '../core/versions.js'

/**
 * A table's tag versions. Written only by the owner; read by the hit path (through the rows), by the
 * change path (a floor) and by the L2 facade (an entry's check).
 *
 * A tag key's version is kept only while it can still change an answer: {@link forget} drops the
 * versions below the oldest birth the rows and flights hold (and, with an L2, below an entry's life
 * ago: see `forgetTagVersions`), and keeps one number in their place, the highest version dropped,
 * at or below which every tagged birth counts as stale. No row held was born that early, so
 * forgetting changes no row's answer; an L2 entry born that early (it may carry a dropped tag) is
 * reloaded, and its reload is born above it. Memory stays bounded by the rows held and the tags
 * invalidated within an L2 entry's life, however many distinct tags a process invalidates over its life.
 */
export class TagVersions {
  /** The version of each tag key that was invalidated and may still change an answer (absent: never, or forgotten). */
  readonly #versions = new Map<string, number>()
  /** The highest version forgotten (0: none): a tagged row or entry born at or below it is stale. */
  #forgotten = 0
  /** The last reading of the version clock: every birth and every floor handed out is above it. */
  #last = 0
  /** Bumped whenever a tag key's version rises: a row checked under the current epoch needs no check. */
  epoch = 0

  /** A reading of the version clock at `now`, above every earlier one: a row's birth, or an invalidation's floor. */
  tick(now: number): number {
    this.#last = Math.max(this.#last + 1, clockVersion(now))
    return this.#last
  }

  /** What the next {@link tick} at `now` would answer, without taking it (for a change about to be handed to the owner). */
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
    const next = Math.max(this.#last + 1, clockVersion(now))
    return Math.min(MAX_VERSION, next - (next % PER_MS) + PER_MS - 1)
  }

  /** Takes note of a version handed out elsewhere (a put's birth, an invalidation from the bus or L2): later readings are above it. */
  observe(version: number): void {
    if (version > this.#last) this.#last = version
  }

  /** Raises `key` to `version` (no lower; not at all when at or below what was forgotten, which already makes those births stale); true when that changed it. */
  raise(key: string, version: number): boolean {
    this.observe(version)
    if (version <= this.#forgotten || version <= (this.#versions.get(key) ?? 0)) return false
    this.#versions.set(key, version)
    this.epoch++
    return true
  }

  /** True when any of `keys` was invalidated at or after `born`, or `born` is no later than a forgotten version. */
  stale(keys: readonly string[], born: number): boolean {
    if (born <= this.#forgotten) return true
    if (this.#versions.size === 0) return false
    for (const key of keys) if ((this.#versions.get(key) ?? 0) >= born) return true
    return false
  }

  /**
   * Forgets the version of every tag key below `oldest` (the earliest birth a row or flight holds
   * now): those versions make no row held stale, so no row's answer changes (the epoch stays), and
   * the highest of them becomes the floor of stale births.
   */
  forget(oldest: number): void {
    let forgotten = this.#forgotten
    const versions = this.#versions
    versions.forEach((version, key) => {
      if (version >= oldest) return
      versions.delete(key)
      if (version > forgotten) forgotten = version
    })
    this.#forgotten = forgotten
  }

  /** Tag keys with a version held now. */
  get size(): number {
    return this.#versions.size
  }
}
