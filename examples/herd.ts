/**
 * The main demo (`npm start`): what EchoStore does to a thundering herd, told by its own counters.
 *
 *  1. a herd of cold readers on one hot id is absorbed by one load;
 *  2. a cohort of rows filled together expires under a steady read load: with jitter 0 the whole
 *     cohort re-loads in one instant (the re-herd), with jitter 0.2 it trickles;
 *  3. a short TTL drives the hit rate down.
 *
 * Time is simulated with a manual clock (origin latency included), so every run prints the same
 * numbers. `DEMO_SCALE` (default 1) scales the read load; on a terminal the counters redraw in place,
 * elsewhere (CI, a pipe) it prints plain lines. With `REDIS_URL` set, every table also uses the Redis
 * L2 (under a fresh key prefix, removed at the end); Redis expires entries in real time, so the demo
 * then runs on the real clock (a few seconds) and its numbers vary a little from run to run.
 * Run: `npm start` or `npx tsx examples/herd.ts`.
 */
import { randomBytes } from 'node:crypto'
import { type Clock, type Stats, type Table, type TableOptions, createTable, systemClock } from 'echostore'
import type { L2Store } from 'echostore/store'
import { manualClock } from 'echostore/testing'
import { redisL2 } from 'echostore/redis'
import { seeded } from './support/prng.js'
import { barChart, counterLine, live, progress } from './support/readout.js'
import { deletePrefix } from './support/redis.js'

const scale = Number(process.env.DEMO_SCALE ?? 1)
if (!(scale > 0)) throw new RangeError(`DEMO_SCALE must be a number > 0, got ${process.env.DEMO_SCALE}`)

/** A simulated origin: answers after `latency` ms of clock time and records when each load began. */
function origin<V>(clock: Clock, latency: number, make: (id: string | number) => V) {
  const startedAt: number[] = []
  const loader = (id: string | number) =>
    new Promise<V>((resolve) => {
      startedAt.push(clock.now())
      clock.setTimeout(() => resolve(make(id)), latency)
    })
  return { loader, startedAt }
}

/** The L2 every table of the demo uses: Redis when `REDIS_URL` is set, else none (the embedded default). */
const redisUrl = process.env.REDIS_URL
const prefix = `echostore-demo:${randomBytes(4).toString('hex')}:`
const l2: L2Store | undefined = redisUrl ? redisL2({ url: redisUrl, prefix }) : undefined
const withL2 = (options: TableOptions): TableOptions => (l2 === undefined ? options : { ...options, l2 })

const turn = () => new Promise<void>((resolve) => setImmediate(resolve))

/** The demo's time: simulated (a manual clock, one step = 1 ms) or, with Redis, real (one step ≈ 1 ms). */
interface SimClock extends Clock {
  step(): Promise<void>
}

function simClock(): SimClock {
  if (l2 === undefined) {
    const clock = manualClock(0)
    return { ...clock, step: () => (clock.advance(1), turn()) }
  }
  const start = Date.now()
  return {
    now: () => Date.now() - start,
    setTimeout: systemClock.setTimeout,
    clearTimeout: systemClock.clearTimeout,
    step: () => new Promise<void>((resolve) => setTimeout(resolve, 1)),
  }
}
const pause = (ms: number) => (live ? new Promise<void>((resolve) => setTimeout(resolve, ms)) : Promise.resolve())

/** Moves simulated time forward 1 ms at a time, calling `each` before every step. */
async function run(clock: SimClock, ms: number, each: (t: number) => void, show?: (t: number) => void): Promise<void> {
  for (let step = 0, end = clock.now() + ms; clock.now() < end; step++) {
    each(clock.now())
    await clock.step()
    if (show !== undefined && step % 10 === 9) {
      show(clock.now())
      await pause(12) // on a terminal, slow enough to watch the counters move
    }
  }
}

/** Moves simulated time forward until `promise` settles (a Redis round trip takes real time). */
async function drive<T>(clock: SimClock, promise: Promise<T>): Promise<T> {
  let done = false
  void promise.then(
    () => (done = true),
    () => (done = true),
  )
  while (!done) await clock.step()
  return promise
}

const out = progress()
const summary: string[] = []

// ---- 1. the herd ----------------------------------------------------------------------------
async function herd(): Promise<Stats> {
  const readers = 200
  console.log(`\n1. A herd: ${readers} cold readers ask for the hottest emoji set at the same instant (origin takes 50 ms).`)
  const clock = simClock()
  const sets = createTable<{ id: string; emoji: string[] }>(withL2({ name: 'emoji_sets', ttl: 60_000, jitter: 0.2, clock }))
  const db = origin(clock, 50, (id) => ({ id: String(id), emoji: ['🎉', '🥳', '🎊'] }))
  const answers = Array.from({ length: readers }, () => sets.fetch('party', db.loader))
  await run(
    clock,
    60,
    () => {},
    () => out.show(counterLine(sets.stats(), `t=${clock.now()}ms`)),
  )
  const values = await drive(clock, Promise.all(answers))
  const stats = sets.stats()
  out.done(counterLine(stats))
  const same = values.every((value) => value === values[0])
  console.log(`   → the loader ran ${stats.loads} time(s); ${stats.coalesced} readers joined its flight; all ${readers} hold the same object: ${same}`)
  summary.push(`herd of ${readers} cold readers:  ${stats.loads} load, ${stats.coalesced} coalesced, every reader got the same object (${same})`)
  await sets.close()
  return stats
}

// ---- 2. the cohort --------------------------------------------------------------------------
interface CohortResult {
  jitter: number
  stats: Stats
  loadsPerWindow: number[]
  first: number
  last: number
  peak: number
  /** How long the fill of the cohort took: 0 on the simulated clock; through Redis, real time, over which the rows' expiries spread even without jitter. */
  fillMs: number
}

async function cohort(jitter: number): Promise<CohortResult> {
  const rows = 400
  const ttl = 1_000
  const readsPerMs = Math.max(1, Math.round(100 * scale))
  const clock = simClock()
  const random = seeded(2026)
  const catalog = createTable<{ sku: number }, number>(withL2({ name: `catalog_jitter_${jitter}`, ttl, jitter, sweepInterval: 100, clock, random }))
  const db = origin(clock, 20, (id) => ({ sku: Number(id) }))
  // Fill the cohort together, at t = 0.
  const fillFrom = clock.now()
  await drive(clock, Promise.all(Array.from({ length: rows }, (_, sku) => catalog.fetch(sku, db.loader))))
  const filledAt = clock.now()
  const reads: Promise<unknown>[] = []
  await run(
    clock,
    1_400,
    () => {
      for (let i = 0; i < readsPerMs; i++) reads.push(catalog.fetch(Math.floor(random() * rows), db.loader))
    },
    (t) => out.show(counterLine(catalog.stats(), `t=${t}ms`)),
  )
  await drive(clock, Promise.all(reads))
  const refills = db.startedAt.filter((t) => t > filledAt)
  const windowOf = (t: number) => Math.floor((t - filledAt) / 10)
  const loadsPerWindow = new Array<number>(windowOf(filledAt + 1_400) + 1).fill(0)
  for (const t of refills) loadsPerWindow[windowOf(t)]++
  const stats = catalog.stats()
  out.done(counterLine(stats))
  await catalog.close()
  return {
    jitter,
    stats,
    loadsPerWindow,
    first: Math.min(...refills) - filledAt,
    last: Math.max(...refills) - filledAt,
    peak: Math.max(...loadsPerWindow),
    fillMs: filledAt - fillFrom,
  }
}

function chart(result: CohortResult, from: number, to: number): void {
  const window = result.loadsPerWindow.slice(from / 10, to / 10)
  for (const line of barChart(window, 5)) console.log(`   │${line}`)
  console.log(`   └${'─'.repeat(window.length)}`)
  console.log(`    ${String(from).padEnd(window.length / 2)}${String(to).padStart(window.length / 2)}  ms after the fill (one column = 10 ms)`)
}

async function cohorts(): Promise<void> {
  console.log(`\n2. A cohort: 400 catalog rows filled together (ttl 1000 ms), then ${Math.round(100 * scale)} reads/ms over them.`)
  console.log('   jitter 0: every row expires exactly 1000 ms after its fill.')
  const flat = await cohort(0)
  console.log('   jitter 0.2: each row expires somewhere in 800–1200 ms after its fill.')
  const jittered = await cohort(0.2)
  for (const result of [flat, jittered]) {
    console.log(
      `\n   jitter ${result.jitter}: re-loads from ${result.first} to ${result.last} ms after the fill ` + `(spread ${result.last - result.first} ms), peak ${result.peak} loads in one 10 ms window`,
    )
    if (result.fillMs > 10) console.log(`   (the 400 fills through Redis took ${result.fillMs} ms of real time: the rows' expiries spread over that much even without jitter)`)
    chart(result, 700, 1_300)
  }
  summary.push(
    `cohort of 400 at jitter 0:     re-loads spread over ${flat.last - flat.first} ms, peak ${flat.peak} loads / 10 ms (a re-herd)`,
    `cohort of 400 at jitter 0.2:   re-loads spread over ${jittered.last - jittered.first} ms, peak ${jittered.peak} loads / 10 ms (a trickle)`,
    `                               swept ${jittered.stats.swept} expired rows in ${jittered.stats.sweeps} sweeps`,
  )
}

// ---- 3. a short TTL -------------------------------------------------------------------------
async function shortTtl(): Promise<void> {
  console.log('\n3. The same hot read load (50 ids, 10 reads/ms for 500 ms) with a 1000 ms TTL and with a 20 ms TTL.')
  const rates: string[] = []
  for (const ttl of [1_000, 20]) {
    const clock = simClock()
    const random = seeded(7)
    const table: Table<number, number> = createTable<number, number>(withL2({ name: `ttl_${ttl}`, ttl, jitter: 0.1, clock, random, sweepInterval: 50 }))
    const db = origin(clock, 5, (id) => Number(id))
    const reads: Promise<unknown>[] = []
    await run(
      clock,
      500,
      () => {
        for (let i = 0; i < Math.max(1, Math.round(10 * scale)); i++) reads.push(table.fetch(Math.floor(random() * 50), db.loader))
      },
      (t) => out.show(counterLine(table.stats(), `ttl ${ttl} t=${t}ms`)),
    )
    await drive(clock, Promise.all(reads))
    const stats = table.stats()
    out.done(`   ttl ${String(ttl).padStart(4)} ms: ${counterLine(stats)}`)
    rates.push(`ttl ${ttl} ms → hit rate ${(stats.hit_rate * 100).toFixed(1)}% with ${stats.loads} loads`)
    await table.close()
  }
  summary.push(`short TTL:                     ${rates.join('; ')}`)
}

console.log('EchoStore demo: a read-through cache that survives a thundering herd by construction.')
console.log(
  l2 === undefined ? 'Time is simulated (a manual clock), so the numbers are the same on every run.' : 'Time is real (Redis expires entries on its own clock): the numbers vary between runs.',
)
console.log(redisUrl ? `L2: Redis at ${redisUrl} (key prefix ${prefix})` : 'L2: none (the embedded default; set REDIS_URL to add the Redis L2)')
console.log(
  'Counter lines: hits and misses of the reads; coalesced, misses that joined a load already running; loads, origin calls;\n' +
    'saved, reads the origin did not have to serve (hits + misses − loads); fills, answers stored; size, rows held; swept, expired rows the sweeper reclaimed.',
)
await herd()
await cohorts()
await shortTtl()
console.log('\nSummary')
for (const line of summary) console.log(`  ${line}`)
if (l2 !== undefined) {
  await l2.close()
  await deletePrefix(prefix)
}
