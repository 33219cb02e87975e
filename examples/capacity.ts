/**
 * Bounding a table: `capacity` (rows) and `maxSize` with `sizeOf` (weight, bytes here).
 *
 *  1. capacity 100: 100 product pages, each read three times, fill the table. A crawler then reads
 *     500 pages once each: on a full table a new id gets in only if it was asked for more often than
 *     the row it would replace (TinyLFU, a frequency estimate), so nearly all the one-off pages are
 *     refused (`full_skips`; the few that get in are the estimate's collisions) and most popular
 *     pages stay hits. A page asked for again and again does get in (`evictions`).
 *  2. maxSize 64 KiB, `sizeOf` = the body's length: pages of 1–16 KiB are held while their weight
 *     fits (`stats().weight` never passes `maxSize`); a 100 KiB page is answered but not stored
 *     (`heavy_skips`), so each read of it goes to the origin.
 *
 * Every refused or too-heavy value is still answered to its readers: a bound never fails a fetch.
 *
 * Run:  npx tsx examples/capacity.ts
 *
 * Look for: size 100 after the crawl, with most popular pages still hits; `full_skips` for the crawl;
 * weight ≤ 65536 throughout; the heavy page loaded on every read. The last line is `RESULT {json}`
 * (spec/examples-capacity.spec.ts checks it).
 */
import { createTable } from 'echostore'

let originCalls = 0
const page = (id: number, bytes = 1_024) => (originCalls++, { id, body: 'x'.repeat(bytes) })
type Page = ReturnType<typeof page>

// 1. A bound on rows.
const pages = createTable<Page, number>({ name: 'pages', ttl: 60_000, capacity: 100 })
const load = (id: number) => page(id)
for (let round = 0; round < 3; round++) for (let id = 0; id < 100; id++) await pages.fetch(id, load)
const popular = pages.stats()
console.log(`1. capacity 100: 100 popular pages read 3× each: size ${popular.size}, loads ${popular.loads}, hits ${popular.hits}`)

for (let id = 1_000; id < 1_500; id++) await pages.fetch(id, load) // a crawler: 500 pages, once each
const crawled = pages.stats()
const answered = crawled.misses - popular.misses
console.log(
  `   a crawl of 500 one-off pages: all ${answered} answered; ${crawled.full_skips} not stored (full_skips), ${crawled.evictions} stored in place of a popular row (evictions); size ${crawled.size}`,
)

const hitsBefore = pages.stats().hits
for (let id = 0; id < 100; id++) await pages.fetch(id, load)
const stillHits = pages.stats().hits - hitsBefore
console.log(`   the 100 popular pages read again: ${stillHits} hits (the crawl did not flush them, as it would an LRU)`)

let readsToAdmit = 0
while (!pages.has(2_000) && readsToAdmit < 20) {
  await pages.fetch(2_000, load) // a page that becomes popular
  readsToAdmit++
}
const admitted = pages.stats()
console.log(`   a new page read until it is held: ${readsToAdmit} reads; evictions ${admitted.evictions} (it replaced a row), size ${admitted.size}`)

// 2. A bound on weight.
const bodies = createTable<Page, number>({ name: 'bodies', ttl: 60_000, maxSize: 65_536, sizeOf: (value) => value.body.length })
const sizes = [1, 16, 4, 8, 2, 16, 12, 1, 16, 4, 8, 16].map((kib) => kib * 1_024)
let heaviest = 0
for (const [i, bytes] of sizes.entries()) {
  await bodies.fetch(i, (id) => page(id, bytes))
  heaviest = Math.max(heaviest, bodies.stats().weight)
}
const weighed = bodies.stats()
console.log(`2. maxSize 65536 bytes: ${sizes.length} pages of 1–16 KiB (${sizes.reduce((a, b) => a + b, 0)} bytes in all) read once each`)
console.log(`   held: ${weighed.size} rows weighing ${weighed.weight} bytes (the most at any time: ${heaviest}); evictions ${weighed.evictions}, full_skips ${weighed.full_skips}`)

const callsBefore = originCalls
const big = await bodies.fetch(99, (id) => page(id, 102_400))
await bodies.fetch(99, (id) => page(id, 102_400))
const heavy = bodies.stats()
console.log(`   a 100 KiB page, read twice: answered (${big.body.length} bytes) but not stored: heavy_skips ${heavy.heavy_skips}, origin calls ${originCalls - callsBefore}`)

const result = {
  capacity: { sizeAfterCrawl: crawled.size, crawlAnswered: answered, fullSkips: crawled.full_skips, popularStillHits: stillHits, readsToAdmit, evictions: admitted.evictions },
  maxSize: { weight: weighed.weight, heaviest, rows: weighed.size, heavySkips: heavy.heavy_skips, heavyOriginCalls: originCalls - callsBefore, heavyAnswered: big.body.length },
}
await Promise.all([pages.close(), bodies.close()])
console.log(`RESULT ${JSON.stringify(result)}`)
