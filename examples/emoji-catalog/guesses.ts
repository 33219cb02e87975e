/**
 * A guess in the emoji guessing game: `Guesses.submit(round, code)` reads the round's emoji set through the
 * catalog (one table read per guess, hot or not) and answers the set, or `{ error: 'bad_guess' }`
 * for a code the round's keyboard does not expose. The single-flight and the counters live in the cache.
 */
import type { Catalog, EmojiSet } from './catalog.js'

/** A round of the game: which emoji set its keyboard shows. */
export interface Round {
  readonly id: number
  readonly setId: string
}

/** What a guess answers: the round's emoji set, or a refusal. */
export type GuessAnswer = EmojiSet | { readonly error: 'bad_guess' }

/** Guesses against one catalog. */
export class Guesses {
  constructor(private readonly catalog: Catalog) {}

  /**
   * Reads the round's emoji set through the cache and answers it when its keyboard exposes `code`;
   * otherwise (or when the set does not exist) `{ error: 'bad_guess' }`.
   */
  async submit(round: Round, code: string): Promise<GuessAnswer> {
    const set = await this.catalog.set(round.setId)
    if (set === undefined || !Object.hasOwn(set.keyboard, code)) return { error: 'bad_guess' }
    return set
  }
}
