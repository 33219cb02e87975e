/**
 * The emoji catalog of the guessing game: emoji sets read through an EchoStore table.
 * The database is simulated on a clock (a load takes `latency` ms of that clock's time), so a
 * manual clock decides exactly when each load answers: a latch that time releases.
 */
import { type Clock, type Id, type Table, createTable } from 'echostore'

/** An emoji set: the keyboard a round exposes, code → emoji. */
export interface EmojiSet {
  readonly id: string
  readonly name: string
  readonly keyboard: Readonly<Record<string, string>>
}

/** The sets in the simulated database. `party` is the most-played one. */
export const EMOJI_SETS: readonly EmojiSet[] = [
  { id: 'party', name: 'Party', keyboard: { tada: '🎉', partying: '🥳', confetti: '🎊', balloon: '🎈', cake: '🎂', gift: '🎁' } },
  { id: 'animals', name: 'Animals', keyboard: { cat: '🐱', dog: '🐶', fox: '🦊', panda: '🐼', owl: '🦉' } },
  { id: 'food', name: 'Food', keyboard: { pizza: '🍕', taco: '🌮', sushi: '🍣', ramen: '🍜', donut: '🍩' } },
  { id: 'weather', name: 'Weather', keyboard: { sun: '☀️', rain: '🌧️', snow: '❄️', storm: '⛈️', rainbow: '🌈' } },
  { id: 'sports', name: 'Sports', keyboard: { soccer: '⚽', tennis: '🎾', medal: '🏅', bike: '🚴', ski: '⛷️' } },
]

/** One database read: which set, when it started and ended (clock ms), and the object it returned. */
export interface DbCall {
  readonly id: Id
  readonly startedAt: number
  endedAt: number | undefined
  value: EmojiSet | undefined
}

/** A simulated emoji-set database: every read takes `latency` ms of `clock` time and is logged. */
export function emojiDb(clock: Clock, latency: number) {
  const calls: DbCall[] = []
  const byId = new Map(EMOJI_SETS.map((set) => [set.id, set]))
  /** Loads one set; a fresh object per read, as a database driver would return. */
  const load = (id: Id): Promise<EmojiSet | undefined> =>
    new Promise((resolve) => {
      const call: DbCall = { id, startedAt: clock.now(), endedAt: undefined, value: undefined }
      calls.push(call)
      clock.setTimeout(() => {
        const found = byId.get(String(id))
        call.endedAt = clock.now()
        call.value = found && { ...found, keyboard: { ...found.keyboard } }
        resolve(call.value)
      }, latency)
    })
  return { load, calls }
}

/** A database as the catalog sees it. */
export type EmojiDb = ReturnType<typeof emojiDb>

/** Options of {@link createCatalog}. */
export interface CatalogOptions {
  db: EmojiDb
  clock: Clock
  /** Row lifetime in ms. Default 1000. */
  ttl?: number
  /** Expiry jitter. Default 0.2. */
  jitter?: number
  /** Jitter source. Default `Math.random`. */
  random?: () => number
  /** The single-flight gate. Default `true`. */
  coalesce?: boolean
}

/** The catalog: emoji sets read through one EchoStore table. */
export class Catalog {
  /** The table of emoji sets (its stats are the cache's own counters). */
  readonly table: Table<EmojiSet | undefined>
  readonly #db: EmojiDb

  constructor({ db, clock, ttl = 1_000, jitter = 0.2, random = Math.random, coalesce = true }: CatalogOptions) {
    this.#db = db
    this.table = createTable<EmojiSet | undefined>({ name: 'emoji_sets', ttl, jitter, random, clock, coalesce, sweepInterval: 250 })
  }

  /** The emoji set `id`, read through the table; `undefined` when the database has no such set. */
  set(id: string): Promise<EmojiSet | undefined> {
    return this.table.fetch(id, this.#db.load)
  }

  /** Closes the table. */
  close(): Promise<void> {
    return this.table.close()
  }
}

/** Creates a {@link Catalog}. */
export function createCatalog(options: CatalogOptions): Catalog {
  return new Catalog(options)
}
