/**
 * Grace: answering stale while the origin fails or is slow. A price service keeps each price 1 s
 * (`ttl: 1_000`, no jitter) and, with `grace: 5_000`, keeps the last value 5 s past its expiry as a
 * fallback. The three rules that may answer that graced value, each on a table of its own:
 *
 *  1. fail-safe (always on with grace): the origin fails after the row expired; the readers get the
 *     graced value instead of the error, and for `graceBackoff` ms the origin is left alone (the
 *     next reads get the graced value at once, no origin call). A change (`invalidate`) beats grace:
 *     after it, a read with the origin still down fails.
 *  2. `staleWhileRevalidate: true`: readers of an expired row get the old value at once, and one
 *     refresh runs behind them; once it lands, reads are hits on the new value.
 *  3. `softTimeout`: the origin answers, but slowly (2 s); after 100 ms the waiters get the graced
 *     value, and the slow load goes on and fills the row when it answers.
 *
 * Time is a manual clock (the origin's latency included), so every run prints the same numbers.
 *
 * Run:  npx tsx examples/grace.ts
 *
 * Look for: each rule's line saying who got the old price (`stale` events with their `reason`), how
 * many origin calls it cost, and the counters `load_errors`, `failsafe` and `stale_hits`. The last
 * line is `RESULT {json}` (spec/examples-grace.spec.ts checks it).
 */
import { createTable, type Table } from 'echostore'
import { manualClock } from 'echostore/testing'
import { manualTime } from './support/manual-time.js'

const clock = manualClock(0)
const { advance, settled: settle } = manualTime(clock)
/** The price origin: answers after `latency` ms of clock time, or fails while `down`. */
const origin = { price: 100, latency: 20, down: false, calls: 0 }
const loadPrice = (_sku: string) =>
  new Promise<number>((resolve, reject) => {
    origin.calls++
    const { price, down } = origin
    clock.setTimeout(() => (down ? reject(new Error('origin: 503 Service Unavailable')) : resolve(price)), origin.latency)
  })

function priceTable(name: string, options: { staleWhileRevalidate?: boolean; softTimeout?: number } = {}): Table<number> {
  const table = createTable<number>({ name, ttl: 1_000, jitter: 0, grace: 5_000, graceBackoff: 2_000, clock, ...options })
  table.events.on('error', () => {}) // the fail-safe still reports each failure it absorbs as an `error` event
  return table
}
const reasons = (table: Table<number>) => {
  const seen: string[] = []
  table.events.on('stale', ({ reason, callers }) => seen.push(`${reason}×${callers}`))
  return seen
}
/** `n` concurrent reads of one sku, settled; each answer as a price or the error's message. */
const read = (table: Table<number>, n: number) => Promise.allSettled(Array.from({ length: n }, () => table.fetch('drill-18v', loadPrice)))
const show = (answers: PromiseSettledResult<number>[]) => [...new Set(answers.map((a) => (a.status === 'fulfilled' ? `${a.value}` : `error (${(a.reason as Error).message})`)))].join(', ')

// 1. The fail-safe.
origin.latency = 20
const failsafe = priceTable('prices-failsafe')
const failsafeStale = reasons(failsafe)
await settle(read(failsafe, 1)) // the first fill: 100
await advance(1_000) // the row expires (graced for 5 s more)
origin.down = true
origin.price = 999
const callsBefore = origin.calls
const outage = await settle(read(failsafe, 10))
const backoff = await settle(read(failsafe, 10))
const failsafeCalls = origin.calls - callsBefore
console.log('1. fail-safe: the row expired, then the origin failed')
console.log(`   10 readers during the failure: ${show(outage)}; 10 more just after (the back-off): ${show(backoff)}`)
console.log(`   origin calls: ${failsafeCalls} (the back-off left it alone); stale events: ${failsafeStale.join(', ')}`)
await failsafe.invalidate('drill-18v')
const afterChange = await settle(read(failsafe, 1))
console.log(`   after invalidate (a change beats grace), with the origin still down: ${show(afterChange)}`)
const f = failsafe.stats()
console.log(`   counters: load_errors ${f.load_errors}, failsafe ${f.failsafe}, stale_hits ${f.stale_hits}`)
origin.down = false

// 2. Stale-while-revalidate.
origin.price = 100
const swr = priceTable('prices-swr', { staleWhileRevalidate: true })
const swrStale = reasons(swr)
await settle(read(swr, 1))
await advance(1_000)
origin.price = 110
const swrBefore = origin.calls
const atOnce = await read(swr, 10) // no time passes: the graced value answers at once
await advance(50) // the one refresh lands
const refreshed = await read(swr, 10)
const s = swr.stats()
const swrCalls = origin.calls - swrBefore
console.log('2. staleWhileRevalidate: the row expired, the origin is up')
console.log(`   10 readers at once: ${show(atOnce)} (no wait); after the refresh: ${show(refreshed)}`)
console.log(`   origin calls: ${swrCalls} (one refresh for 10 stale readers); stale events: ${swrStale.join(', ')}; hits ${s.hits}, stale_hits ${s.stale_hits}`)

// 3. Soft timeout.
origin.price = 100
const soft = priceTable('prices-soft', { softTimeout: 100 })
const softStale = reasons(soft)
await settle(read(soft, 1))
await advance(1_000)
origin.price = 120
origin.latency = 2_000
const softBefore = origin.calls
const slowStart = clock.now()
const early = await settle(read(soft, 10))
const answeredAfter = clock.now() - slowStart
await advance(2_000) // the slow load answers and fills the row
const later = await read(soft, 1) // a hit: no clock time needed
const t = soft.stats()
console.log('3. softTimeout 100 ms: the row expired, the origin takes 2 s')
console.log(`   10 readers, answered after ${answeredAfter} ms: ${show(early)}; after the slow load landed: ${show(later)}`)
console.log(`   origin calls: ${origin.calls - softBefore}; stale events: ${softStale.join(', ')}; fills ${t.fills}, stale_hits ${t.stale_hits}`)

const result = {
  failsafe: {
    outage: show(outage),
    backoff: show(backoff),
    originCalls: failsafeCalls,
    afterChange: show(afterChange),
    reasons: failsafeStale,
    load_errors: f.load_errors,
    failsafe: f.failsafe,
    stale_hits: f.stale_hits,
  },
  swr: { atOnce: show(atOnce), refreshed: show(refreshed), originCalls: swrCalls, reasons: swrStale, stale_hits: s.stale_hits },
  soft: { early: show(early), answeredAfter, later: show(later), originCalls: origin.calls - softBefore, reasons: softStale, stale_hits: t.stale_hits },
}
await Promise.all([failsafe.close(), swr.close(), soft.close()])
console.log(`RESULT ${JSON.stringify(result)}`)
