import type { Id } from '../src/index.js'
import { zipf } from '../examples/support/prng.js'

/** What the soak's tables hold: a value names its id, so every answer can be checked against the id asked for. */
export interface Row {
  readonly id: Id
  /** Unique per load or put: tells one answer from another. */
  readonly n: number
  /** Loaded from the origin, or written by a put. */
  readonly by: 'load' | 'put'
}

/** Ids that exist at the origin, ranked by popularity. */
export const ID_SPACE = 2_000
/** Zipf exponent of the reads: the hottest id gets about 12% of them. */
export const ZIPF_S = 1

/**
 * The "database" behind every table: the ids that exist (ranks `0 .. ID_SPACE − 1`, half of them
 * numbers and half strings, so `7` and `'7'` are both there), ids that do not ("ghosts"), and one
 * version per id that grows with each change the soak makes.
 */
export class Origin {
  readonly #versions = new Map<Id, number>()
  #n = 0

  /** The id of popularity rank `rank`: even ranks are numbers, odd ranks the same numbers as strings. */
  idOf(rank: number): Id {
    return rank % 2 === 0 ? rank >> 1 : String(rank >> 1)
  }

  /** A Zipf sampler of existing ids over `random`. */
  hotIds(random: () => number): () => Id {
    const rank = zipf(ID_SPACE, ZIPF_S, random)
    return () => this.idOf(rank())
  }

  /** An id that does not exist: a fresh string, or a negative fraction (valid, finite, never a rank). */
  ghost(random: () => number): Id {
    const k = Math.floor(random() * 1e9)
    return random() < 0.5 ? `ghost:${k}` : -(k + 1) / 4
  }

  /** A fresh row for `id` as the origin holds it now, or `undefined` when it does not exist. */
  read(id: Id): Row | undefined {
    return this.exists(id) ? { id, n: ++this.#n, by: 'load' } : undefined
  }

  /** A fresh row for `id`, written by a put. */
  written(id: Id): Row {
    return { id, n: ++this.#n, by: 'put' }
  }

  /** The version of `id`'s latest change (0 before any). */
  version(id: Id): number {
    return this.#versions.get(id) ?? 0
  }

  /** A new change of `id`: its version, one above the last. */
  bump(id: Id): number {
    const version = this.version(id) + 1
    this.#versions.set(id, version)
    return version
  }

  /**
   * True for the ids fed with the origin's versions (seven in ten of those that exist): every change
   * of one gives its version, and loaders may report it; the other ids' versions are minted by the
   * tables. A table refuses a version the data gives below one it minted, so no id takes both.
   */
  versioned(id: Id): boolean {
    return this.exists(id) && Number(id) % 10 < 7
  }

  /** True for the ids of ranks `0 .. ID_SPACE − 1`; false for ghosts. */
  exists(id: Id): boolean {
    return typeof id === 'number' ? Number.isInteger(id) && id >= 0 && id < ID_SPACE / 2 : /^(0|[1-9]\d*)$/.test(id) && Number(id) < ID_SPACE / 2
  }
}
