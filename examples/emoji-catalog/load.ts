/**
 * The guessing game's load: many guesses on the most-played emoji set while its row expires, again and again.
 * Every expiry sends a herd of guesses to a row that is gone; the table coalesces the herd onto one
 * flight, so the herd costs one loader run and every guess in it receives the one answer.
 *
 * Run:  npx tsx examples/emoji-catalog/load.ts          (EMOJI_SCALE=0.25 for a lighter run;
 *       COALESCE=off to see what the herds cost without the single-flight)
 * Look for: each herd line saying `1 load` for hundreds of readers; `loads` equal to the number of
 * herds; hits + misses = guesses; misses = flights + coalesced. The last line is `RESULT {json}`.
 *
 * Time is a manual clock and the database answers after 50 ms of that clock (a latch that time
 * releases), so every run prints the same numbers.
 */
import { fileURLToPath } from 'node:url'
import type { Stats } from 'echostore'
import { manualClock } from 'echostore/testing'
import { counterLine } from '../support/readout.js'
import { seeded } from '../support/prng.js'
import { type DbCall, EMOJI_SETS, createCatalog, emojiDb } from './catalog.js'
import { type GuessAnswer, Guesses, type Round } from './guesses.js'

/** One herd: the reads of one set that found no live row, from the load's start to its answer. */
export interface Herd {
  set: string
  kind: 'cold' | 'expiry'
  /** Clock ms when the herd's first load started and when it answered (the row was live again). */
  at: number
  until: number
  /** Guesses on this set in the window (each found no live row). */
  readers: number
  /** Database loads of this set that started in the window: 1 when the herd was absorbed. */
  loads: number
  /** Every guess of the window that got a set got the very object this load returned. */
  sameObject: boolean
}

/** What {@link main} returns. */
export interface EmojiLoadResult {
  config: { sets: number; hot: string; hotShare: number; ttl: number; jitter: number; latency: number; guessesPerMs: number; durationMs: number }
  guesses: { total: number; onHot: number; bad: number }
  herds: Herd[]
  /** The table's own counters at the end. */
  stats: Stats
  /** Database calls (origin work), counted by the database itself. */
  dbCalls: number
}

const HOT = 'party'
const TTL = 1_000
const JITTER = 0.2
const LATENCY = 50
const DURATION = 3_500
const HOT_SHARE = 0.8

const turn = () => new Promise<void>((resolve) => setImmediate(resolve))

/**
 * Groups database calls into herds: per set, a herd runs from a load's start to its answer (when the
 * row is live again); every load of the set that starts in that window belongs to the herd (with
 * the single-flight on, there is none). Readers are counted from the guesses' own log.
 */
function herdsOf(calls: readonly DbCall[], guesses: readonly { set: string; t: number; answer: GuessAnswer }[]): Herd[] {
  const herds: (Herd & { values: Set<unknown> })[] = []
  const open = new Map<string, Herd & { values: Set<unknown> }>()
  for (const call of [...calls].sort((a, b) => a.startedAt - b.startedAt)) {
    const set = String(call.id)
    const until = call.endedAt ?? Infinity
    const herd = open.get(set)
    if (herd !== undefined && call.startedAt < herd.until) {
      herd.loads++
      herd.values.add(call.value)
    } else {
      const fresh = {
        set,
        kind: herd === undefined ? ('cold' as const) : ('expiry' as const),
        at: call.startedAt,
        until,
        readers: 0,
        loads: 1,
        sameObject: true,
        values: new Set<unknown>([call.value]),
      }
      herds.push(fresh)
      open.set(set, fresh)
    }
  }
  for (const herd of herds) {
    const inWindow = guesses.filter((guess) => guess.set === herd.set && guess.t >= herd.at && guess.t < herd.until)
    herd.readers = inWindow.length
    const [only] = herd.values
    herd.sameObject = herd.values.size === 1 && inWindow.every((guess) => 'error' in guess.answer || guess.answer === only)
  }
  return herds.map(({ values, ...herd }) => herd)
}

/** Options of {@link main}. */
export interface EmojiLoadOptions {
  /** Multiplies the 20 guesses per simulated ms. Default 1. */
  scale?: number
  /** The single-flight gate (turn it off to see each herd cost hundreds of loads). Default `true`. */
  coalesce?: boolean
  /** Where the readout goes. Default `console.log`. */
  log?: (line: string) => void
}

/**
 * Plays `20 × scale` guesses per simulated ms for 3.5 s, 80% of them on the `party` round, one in
 * five with a code its keyboard does not expose. Prints with `log` and returns the numbers.
 */
export async function main({ scale = 1, coalesce = true, log = console.log }: EmojiLoadOptions = {}): Promise<EmojiLoadResult> {
  if (!(scale > 0)) throw new RangeError(`scale must be a number > 0, got ${scale}`)
  const guessesPerMs = Math.max(1, Math.round(20 * scale))
  const clock = manualClock(0)
  const random = seeded(2026)
  const db = emojiDb(clock, LATENCY)
  const catalog = createCatalog({ db, clock, ttl: TTL, jitter: JITTER, random: seeded(7), coalesce })
  const guesses = new Guesses(catalog)
  const rounds: Round[] = EMOJI_SETS.map((set, id) => ({ id, setId: set.id }))
  const hot = rounds.find((round) => round.setId === HOT)!
  const codes = new Map(EMOJI_SETS.map((set) => [set.id, Object.keys(set.keyboard)]))

  log(`Emoji catalog: ${EMOJI_SETS.length} sets; "${HOT}" is the most-played (${HOT_SHARE * 100}% of guesses).`)
  log(`ttl ${TTL} ms ± ${JITTER * 100}%, the database takes ${LATENCY} ms; ${guessesPerMs} guesses per ms for ${DURATION} ms of simulated time.`)

  const played: { set: string; t: number; answer: Promise<GuessAnswer> }[] = []
  let bad = 0
  for (let t = 0; t < DURATION; t++) {
    for (let i = 0; i < guessesPerMs; i++) {
      const round = random() < HOT_SHARE ? hot : rounds[1 + Math.floor(random() * (rounds.length - 1))]!
      const keys = codes.get(round.setId)!
      const wrong = random() < 0.2
      if (wrong) bad++
      const code = wrong ? 'unicorn' : keys[Math.floor(random() * keys.length)]!
      played.push({ set: round.setId, t, answer: guesses.submit(round, code) })
    }
    await turn() // this ms's misses reach the owner and the database at this instant
    clock.advance(1)
    await turn() // answers due land before the next ms's guesses
  }
  clock.advance(LATENCY)
  await turn()
  const answered = await Promise.all(played.map(async (guess) => ({ set: guess.set, t: guess.t, answer: await guess.answer })))
  const stats = catalog.table.stats()
  await catalog.close()

  const herds = herdsOf(db.calls, answered)
  const hotHerds = herds.filter((herd) => herd.set === HOT)
  log(`\nHerds on "${HOT}" (readers: guesses that found no live row, from the load's start to its answer):`)
  for (const herd of hotHerds) {
    log(
      `  t=${String(herd.at).padStart(4)}–${String(herd.until).padEnd(4)} ms  ${herd.kind.padEnd(6)}  ${String(herd.readers).padStart(4)} readers → ` +
        `${herd.loads} load${herd.loads === 1 ? '' : 's'}${herd.sameObject ? ', every reader got the same object' : ', readers got DIFFERENT objects'}`,
    )
  }
  const others = herds.filter((herd) => herd.set !== HOT)
  log(`  (the other ${EMOJI_SETS.length - 1} sets: ${others.length} herds, ${others.reduce((n, herd) => n + herd.readers, 0)} readers, ${others.reduce((n, herd) => n + herd.loads, 0)} loads)`)
  log(`\nCounters: ${counterLine(stats).replace(/ +/g, ' ')}`)
  const onHot = played.filter((guess) => guess.set === HOT).length
  log(`  guesses ${played.length} (${onHot} on "${HOT}", ${bad} bad codes answered { error: 'bad_guess' }) = hits + misses ${stats.hits + stats.misses}`)
  log(`  misses ${stats.misses} = flights ${stats.flights} + coalesced ${stats.coalesced}; loads ${stats.loads} = database calls ${db.calls.length}`)
  const hotLoads = hotHerds.reduce((n, herd) => n + herd.loads, 0)
  log(
    `  → ${hotHerds.length} herds on "${HOT}" cost ${hotLoads} loader runs for ${hotHerds.reduce((n, herd) => n + herd.readers, 0)} readers` +
      (hotLoads === hotHerds.length ? ': one load per herd.' : ` (coalescing ${coalesce ? 'on' : 'off'}).`),
  )

  const result: EmojiLoadResult = {
    config: { sets: EMOJI_SETS.length, hot: HOT, hotShare: HOT_SHARE, ttl: TTL, jitter: JITTER, latency: LATENCY, guessesPerMs, durationMs: DURATION },
    guesses: { total: played.length, onHot, bad },
    herds,
    stats,
    dbCalls: db.calls.length,
  }
  log(`RESULT ${JSON.stringify({ ...result, herds: hotHerds.map(({ at, until, readers, loads }) => ({ at, until, readers, loads })) })}`)
  return result
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  await main({ scale: Number(process.env.EMOJI_SCALE ?? 1), coalesce: process.env.COALESCE !== 'off' })
}
