/**
 * Tag versions: what makes `invalidateTags` O(1). Invalidating a tag gives it a new version; every
 * row remembers when it was born (the version clock's reading when its load started, or its put),
 * and a row is stale once any of its tag keys holds a version at or above its birth. Nothing walks
 * the rows: a read compares, and the sweeper reclaims what reads no longer answer.
 *
 * Births and invalidations are both readings of the table's version clock (`VersionClock`, in
 * `core/versions.ts`), which orders them; this module keeps what the invalidations left behind.
 */

/**
 * A table's tag versions. Written only by the owner; read by the hit path (through the rows), by the
 * change path (a floor) and by the L2 facade (an entry's check).
 *
 * A tag key's version is kept only while it can still change an answer: {@link forget} drops the
 * versions below the oldest birth the rows and flights hold, so no row's answer changes (a row born
 * later is born above them, and one filled from L2 was checked by the facade as it entered). An L2
 * entry is checked against the store's own tag versions too, so an invalidation L2 took needs no
 * memory here; one L2 may not hold (it did not take it, or this table heard of it on the bus without
 * word that its own L2 minted it) is kept
 * as long as an entry of the table's lifetimes born before it may live in L2, and once dropped, its
 * version raises one number, at or below which every tagged L2 entry counts as stale (an entry of a
 * lifetime of its own, longer than the table's: reloaded once, never answered stale). So forgetting
 * changes no answer, an entry is a miss only when one of its own tags was invalidated after its birth
 * (or after L2 failed a tag invalidation it may have missed), and memory stays bounded by the rows
 * held and the invalidations L2 may not hold within an entry's life.
 */
export class TagVersions {
  /** The version of each tag key that was invalidated and may still change an answer (absent: never, or forgotten). */
  readonly #versions = new Map<string, number>()
  /** The keys of {@link #versions} whose version L2 may not hold (not known to have been taken by L2's tag versions). */
  readonly #untaken = new Set<string>()
  /** The highest version forgotten that L2 may not hold (0: none): a tagged L2 entry born at or below it is stale. */
  #forgottenUntaken = 0
  /** Bumped whenever a tag key's version rises: a row checked under the current epoch needs no check. */
  epoch = 0

  /**
   * Raises `key` to `version` (no lower); true when that changed it. `taken`: L2's tag versions hold
   * it (L2 minted it), so an L2 entry needs no memory of it here once no row does. The version clock
   * takes note of `version` apart from this (see `onTags`).
   */
  raise(key: string, version: number, taken = false): boolean {
    if (version <= (this.#versions.get(key) ?? 0)) return false
    this.#versions.set(key, version)
    if (taken) this.#untaken.delete(key)
    else this.#untaken.add(key)
    this.epoch++
    return true
  }

  /** True when any of `keys` was invalidated at or after `born` (a row's check). */
  stale(keys: readonly string[], born: number): boolean {
    if (this.#versions.size === 0) return false
    for (const key of keys) if ((this.#versions.get(key) ?? 0) >= born) return true
    return false
  }

  /**
   * True when an L2 entry born at `born` carrying `keys` is stale by what this table knows (the
   * facade checks the store's own tag versions besides): one of its keys was invalidated at or after
   * its birth, or it is no later than a forgotten invalidation L2 may not hold.
   */
  staleInL2(keys: readonly string[], born: number): boolean {
    return born <= this.#forgottenUntaken || this.stale(keys, born)
  }

  /**
   * Forgets the version of every tag key below `oldest` (the earliest birth a row or flight holds
   * now): those versions make no row held stale, so no row's answer changes (the epoch stays). One L2
   * may not hold is kept while it is at or above `entryOldest` too (the birth of the oldest entry of
   * the table's lifetimes L2 may still hold; +∞ without an L2); once dropped, it raises the floor of
   * stale L2 births (see {@link staleInL2}).
   */
  forget(oldest: number, entryOldest: number): void {
    for (const [key, version] of this.#versions) {
      if (version >= oldest) continue
      const untaken = this.#untaken.has(key)
      if (untaken && version >= entryOldest) continue
      this.#versions.delete(key)
      if (!untaken) continue
      this.#untaken.delete(key)
      if (version > this.#forgottenUntaken) this.#forgottenUntaken = version
    }
  }

  /** Tag keys with a version held now. */
  get size(): number {
    return this.#versions.size
  }
}
