import type { L2Store } from '../../src/store.js'

/**
 * `store`, with its `set` answers held back until {@link release} (from then on they answer at
 * once, until {@link hold}): the write reaches the store at once (or, with `late`, only on release).
 */
export function heldWrites(store: L2Store, late = false) {
  const waiting: (() => void)[] = []
  let holding = true
  const held: L2Store = {
    get: (t, i) => store.get(t, i),
    set: (t, i, entry) => {
      if (!holding) return store.set(t, i, entry)
      if (late) return new Promise<boolean>((resolve, reject) => waiting.push(() => void store.set(t, i, entry).then(resolve, reject)))
      const written = store.set(t, i, entry)
      return new Promise<boolean>((resolve, reject) => waiting.push(() => void written.then(resolve, reject)))
    },
    nextVersion: (t, i, floor) => store.nextVersion(t, i, floor),
    clear: (t) => store.clear(t),
    tagVersions: (t, tags) => store.tagVersions!(t, tags),
    invalidateTags: (t, tags, floor) => store.invalidateTags!(t, tags, floor),
    ...(store.leases === undefined ? {} : { leases: store.leases }),
    close: () => store.close(),
  }
  return {
    held,
    /** Lets every held write answer, and the next ones at once. */
    release: () => {
      holding = false
      waiting.splice(0).forEach((go) => go())
    },
    /** Holds the next writes' answers again. */
    hold: () => {
      holding = true
    },
    get pending() {
      return waiting.length
    },
  }
}
