/**
 * How often ids were asked for lately, in little memory: the TinyLFU admission filter of a full table
 * (Einziger, Friedman and Manes; sized and aged as Caffeine's `FrequencySketch`). A count-min sketch
 * of 4-bit counters: four rows, each id counted in one counter per row, its frequency the smallest
 * of the four, updated conservatively (only the counters at that minimum grow, which keeps the
 * estimate tight); aged by halving every counter once the sketch has counted ten times the table's
 * capacity, counting (as Caffeine does) only the occurrences that raised an estimate. Ids are given
 * as 32-bit hashes. (No doorkeeper: on the project's hit-rate traces it cost more hits than it saved
 * memory.)
 *
 * Size: four rows of 4 × the capacity rounded up to a power of two counters, 4 bits each: 8 bytes
 * per row of capacity (Caffeine's size), which the hit-rate traces need: half of it loses 0.5–1.2
 * points of hit rate on each.
 *
 * Written only by the owner.
 */

/** Rows of counters: an id's frequency is its smallest counter across them. */
const DEPTH = 4
/** Counters per row, per row of capacity (rounded up to a power of two). */
const WIDTH_FACTOR = 4
/** Largest value a counter holds. */
const MAX_COUNT = 15
/** Additions per aging, as a multiple of the capacity. */
const SAMPLE_FACTOR = 10

/** Odd 32-bit multipliers, one per row, to spread one hash over the rows. */
const SEEDS = [0x9e3779b1, 0x85ebca6b, 0xc2b2ae35, 0x27d4eb2f] as const

export class FrequencySketch {
  /** Two 4-bit counters per byte; row `r` holds counters `r·width … r·width + width − 1`. */
  readonly #counters: Uint8Array
  /** The same counters, four bytes (eight counters) a word: {@link #age} halves a word at a time. */
  readonly #words: Uint32Array
  readonly #width: number
  readonly #sampleSize: number
  #additions = 0

  constructor(capacity: number) {
    this.#width = WIDTH_FACTOR * 2 ** Math.max(3, Math.ceil(Math.log2(capacity)))
    this.#counters = new Uint8Array((DEPTH * this.#width) / 2)
    this.#words = new Uint32Array(this.#counters.buffer)
    this.#sampleSize = SAMPLE_FACTOR * capacity
  }

  /** How often the id hashed to `hash` was counted lately: 0 to 15. */
  frequency(hash: number): number {
    let least = MAX_COUNT
    for (let row = 0; row < DEPTH; row++) least = Math.min(least, this.#get(this.#index(hash, row)))
    return least
  }

  /** Counts `times` (≥ 1) more occurrences of the id hashed to `hash`. */
  increment(hash: number, times = 1): void {
    // One counter in each of the DEPTH (4) rows, no two in one byte: each read once, raised to the one target.
    const a = this.#index(hash, 0)
    const b = this.#index(hash, 1)
    const c = this.#index(hash, 2)
    const d = this.#index(hash, 3)
    const countA = this.#get(a)
    const countB = this.#get(b)
    const countC = this.#get(c)
    const countD = this.#get(d)
    const least = Math.min(countA, countB, countC, countD)
    const target = Math.min(MAX_COUNT, least + times)
    if (countA < target) this.#set(a, target)
    if (countB < target) this.#set(b, target)
    if (countC < target) this.#set(c, target)
    if (countD < target) this.#set(d, target)
    // Only the occurrences that raised the estimate count towards the next aging, as in Caffeine: an id
    // already at the top (or a herd's requests past it) ages nobody else's counts.
    this.#additions += target - least
    if (this.#additions >= this.#sampleSize) this.#age()
  }

  /** The counter of `hash` in `row`. */
  #index(hash: number, row: number): number {
    let h = Math.imul(hash, SEEDS[row]!)
    h ^= h >>> 15
    return row * this.#width + (h & (this.#width - 1))
  }

  #get(counter: number): number {
    const byte = this.#counters[counter >>> 1]!
    return counter & 1 ? byte >>> 4 : byte & 0x0f
  }

  #set(counter: number, value: number): void {
    const at = counter >>> 1
    const byte = this.#counters[at]!
    this.#counters[at] = counter & 1 ? (byte & 0x0f) | (value << 4) : (byte & 0xf0) | value
  }

  /**
   * Halves every counter: old popularity fades. Eight counters a step: a bit a shift carries into
   * the counter below lands in its top bit, which the mask clears. A herd of N misses counts N at
   * once, so a small table ages every few herds, and this runs too seldom to be optimized.
   */
  #age(): void {
    const words = this.#words
    for (let i = 0; i < words.length; i++) words[i] = (words[i]! >>> 1) & 0x77777777
    this.#additions = 0
  }
}
