/**
 * A caller's own deadline and cancellation, the flight's bound, and a forced refresh: the options of
 * `fetch(id, loader, { timeout, signal, forceRefresh })` and the table's `loadTimeout`.
 *
 *  1. Three requests read one cold id from a slow origin (300 ms): one with `timeout: 50`, one whose
 *     `signal` aborts at 100 ms (the client went away), one plain. The first two leave
 *     (`FetchTimeoutError`, the signal's reason); the flight goes on and the third gets the value:
 *     one origin call.
 *  2. Every caller of a flight leaves by its signal: the flight is released (`abandoned`) and the
 *     loader's own `signal` aborts, so it can stop its query.
 *  3. An origin that never answers, on a table with `loadTimeout: 200`: every waiter gets
 *     `LoadTimeoutError` at 200 ms, and the loader's signal aborts.
 *  4. `forceRefresh: true` reloads a live row: a plain read is a hit on the old value, a forced one
 *     asks the origin and replaces the row.
 *
 * Run:  npx tsx examples/deadlines.ts
 *
 * Time is a manual clock (the origin's latency included), so every run prints the same numbers.
 *
 * Look for: each request's outcome and when it came (ms after the reads began); `timeouts`,
 * `cancelled`, `abandoned` and `load_errors` counting them; one origin call where one is said.
 * The last line is `RESULT {json}` (spec/examples-deadlines.spec.ts checks it).
 */
import { createTable } from 'echostore'
import { manualClock } from 'echostore/testing'
import { manualTime } from './support/manual-time.js'

const clock = manualClock(0)
const { turn, settled } = manualTime(clock)
/** Resolves once `ms` of clock time passed, or rejects with the signal's reason once it aborts. */
const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = clock.setTimeout(resolve, ms)
    signal?.addEventListener('abort', () => (clock.clearTimeout(timer), reject(signal.reason)), { once: true })
  })
let originCalls = 0
const loaderAborts: string[] = []
/** The origin: answers `{ id, version }` after `ms` of clock time, or never when `ms` is Infinity; stops when the flight's signal aborts. */
const origin =
  (ms: number, version = 1) =>
  async (id: string, { signal }: { signal: AbortSignal }) => {
    originCalls++
    signal.addEventListener('abort', () => loaderAborts.push(`${id}: ${(signal.reason as Error).name}`), { once: true })
    await (ms === Number.POSITIVE_INFINITY ? new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true })) : sleep(ms, signal))
    return { id, version }
  }
/** How a read ended, and when (ms of clock time since `start`). */
const outcome = (start: number, read: Promise<{ version: number }>) =>
  read.then(
    (value) => `value v${value.version} at ${clock.now() - start} ms`,
    (error: Error) => `${error.name} at ${clock.now() - start} ms`,
  )
// 1. Three callers of one flight, each with its own deadline.
const users = createTable<{ id: string; version: number }>({ name: 'users', clock })
let start = clock.now()
const gone = new AbortController()
clock.setTimeout(() => gone.abort(new DOMException('the client went away', 'AbortError')), 100)
const three = await settled(
  Promise.all([
    outcome(start, users.fetch('ada', origin(300), { timeout: 50 })),
    outcome(start, users.fetch('ada', origin(300), { signal: gone.signal })),
    outcome(start, users.fetch('ada', origin(300))),
  ]),
)
const one = users.stats()
console.log('1. one flight, three callers (origin 300 ms):')
console.log(`   timeout 50: ${three[0]}; signal aborted at 100: ${three[1]}; plain: ${three[2]}`)
console.log(`   origin calls ${originCalls}; timeouts ${one.timeouts}, cancelled ${one.cancelled}, fills ${one.fills}`)

// 2. Every caller leaves: the flight is released, the loader's signal aborts.
const callsBefore = originCalls
const all = new AbortController()
clock.setTimeout(() => all.abort(new DOMException('every client went away', 'AbortError')), 50)
start = clock.now()
const both = await settled(Promise.all([outcome(start, users.fetch('bob', origin(300), { signal: all.signal })), outcome(start, users.fetch('bob', origin(300), { signal: all.signal }))]))
await turn() // the release reaches the loader
console.log('2. every caller leaves by its signal:')
console.log(`   both callers: ${both.join('; ')}; abandoned ${users.stats().abandoned}; the loader's signal: ${loaderAborts.join(', ') || 'not aborted'}; origin calls ${originCalls - callsBefore}`)

// 3. The flight's own bound.
const hung = createTable<{ id: string; version: number }>({ name: 'hung', loadTimeout: 200, clock })
start = clock.now()
const bounded = await settled(Promise.all([outcome(start, hung.fetch('eve', origin(Number.POSITIVE_INFINITY))), outcome(start, hung.fetch('eve', origin(Number.POSITIVE_INFINITY)))]))
await turn()
console.log('3. an origin that never answers, loadTimeout 200:')
console.log(`   both waiters: ${[...new Set(bounded)].join(', ')}; load_errors ${hung.stats().load_errors}; the loader's signal: ${loaderAborts.at(-1)}`)

// 4. A forced refresh of a live row.
const refreshCalls = originCalls
const plain = await settled(users.fetch('ada', origin(10, 2)))
const forced = await settled(users.fetch('ada', origin(10, 2), { forceRefresh: true }))
const after = await settled(users.fetch('ada', origin(10, 3)))
console.log('4. forceRefresh on a live row (the origin now has v2):')
console.log(`   plain read: v${plain.version} (a hit); forced: v${forced.version}; a plain read after it: v${after.version}; origin calls ${originCalls - refreshCalls}`)

const result = {
  deadlines: three,
  first: { timeouts: one.timeouts, cancelled: one.cancelled, fills: one.fills, originCalls: callsBefore },
  abandoned: { outcomes: both, abandoned: users.stats().abandoned, loaderAborted: loaderAborts.some((a) => a.startsWith('bob')) },
  loadTimeout: { outcomes: bounded, loadErrors: hung.stats().load_errors, loaderAborted: loaderAborts.some((a) => a.startsWith('eve')) },
  forceRefresh: { plain: plain.version, forced: forced.version, after: after.version, originCalls: originCalls - refreshCalls },
}
await Promise.all([users.close(), hung.close()])
console.log(`RESULT ${JSON.stringify(result)}`)
