import { seededRandom, zipfFrom } from '../lib/random.js'

/**
 * W12's day as a seeded trace: every read and stock update with its instant (ms after the day
 * starts) and the instance (0–3) a load balancer sends it to. The parent and every child process
 * build the same trace from the same plan, so no trace crosses a process boundary. In the
 * one-instance shape every event goes to the one instance; in the four-instance shape each child
 * takes the events addressed to it.
 */

/** Tenants × depots × products: the catalogue of stock rows. */
export const TENANTS = 20
export const DEPOTS = 10
export const PRODUCTS = 250
export const CATALOGUE = TENANTS * DEPOTS * PRODUCTS
/** Ids that look like stock rows but do not exist at the origin. */
export const MISSING = 1_000
/** Campaign products: cold keys no ordinary read touches. */
export const CAMPAIGN_KEYS = 6
/** Every key the day can name: catalogue, then missing ids, then campaign products. */
export const KEYS = CATALOGUE + MISSING + CAMPAIGN_KEYS

/** What an event does. */
export const READ = 0
/** An update: the origin changes the row, then the instance calls its cache's invalidate. */
export const UPDATE = 1
/** The first update of a quick pair: once it finished, the instance reads the id (starting a load), and the pair's second update lands while that load is in flight. */
export const UPDATE_THEN_READ = 2

/** The knobs of one day; everything else follows from them and its random seed. */
export interface DayPlan {
  seed: number
  /** Length of the day in ms (real time). */
  dayMs: number
  /** Row lifetime every contender is given, ms. */
  ttl: number
  /** Ordinary reads per second, Poisson arrivals. */
  readsPerSec: number
  /** Share of ordinary reads that name an id the origin does not have. */
  missingShare: number
  /** Single stock updates per second, Poisson; popular rows are updated more. */
  updatesPerSec: number
  /** Quick pairs per second: update, a read that starts a load, a second update `pairGapMs` later. */
  pairsPerSec: number
  pairGapMs: number
  /** The hottest rows, read all at once when the day starts (so they share an expiry). */
  hotRows: number
  /** Campaign bursts: when (ms), which campaign keys, and readers per key, all at one instant. */
  bursts: { at: number; keys: number[] }[]
  readersPerBurstKey: number
  /** The origin is down in [from, to) ms. */
  outage: { from: number; to: number }
}

/** The day `npm run bench` runs: 8 s at full size, 3 s (same shape, compressed) for a quick check. */
export function dayPlan(full: boolean): DayPlan {
  const dayMs = full ? 8_000 : 3_000
  const at = (share: number) => Math.round(dayMs * share)
  return {
    seed: 20_261_201,
    dayMs,
    ttl: 1_000,
    readsPerSec: 4_000,
    missingShare: 0.03,
    updatesPerSec: 40,
    pairsPerSec: 10,
    pairGapMs: 3,
    hotRows: 300,
    bursts: [
      { at: at(0.19), keys: [0, 1, 2] },
      { at: at(0.4), keys: [0, 1, 2] },
      { at: at(0.75), keys: [0, 1, 2] },
      { at: at(0.91), keys: [3, 4, 5] },
    ],
    readersPerBurstKey: 300,
    outage: { from: at(0.55), to: at(0.55) + (full ? 2_500 : 900) },
  }
}

/** The day's events in time order, as parallel arrays. */
export interface DayTrace {
  at: Float64Array
  kind: Uint8Array
  key: Int32Array
  instance: Uint8Array
  length: number
}

/** The id of key `k`: `t<tenant>:d<depot>:p<product>`, `t<tenant>:d<depot>:x<n>` (missing), or `campaign:<n>`. */
export function keyId(k: number): string {
  if (k < CATALOGUE) {
    const product = k % PRODUCTS
    const depot = Math.floor(k / PRODUCTS) % DEPOTS
    const tenant = Math.floor(k / (PRODUCTS * DEPOTS))
    return `t${tenant}:d${depot}:p${product}`
  }
  if (k < CATALOGUE + MISSING) {
    const n = k - CATALOGUE
    return `t${n % TENANTS}:d${n % DEPOTS}:x${n}`
  }
  return `campaign:${k - CATALOGUE - MISSING}`
}

/** True for a key the origin has a row for. */
export function exists(k: number): boolean {
  return k < CATALOGUE || k >= CATALOGUE + MISSING
}

/** A campaign key's index among all keys. */
export function campaignKey(n: number): number {
  return CATALOGUE + MISSING + n
}

/** The Zipf exponent of row popularity. */
export const POPULARITY = 1.3

/** The `n` hottest rows: products 0, 1, … of depots 0–4 of tenants 0–2 (15 depots in all). */
function hottestRows(n: number): number[] {
  const out: number[] = []
  for (let p = 0; out.length < n; p++) for (let t = 0; t < 3; t++) for (let d = 0; d < 5 && out.length < n; d++) out.push((t * DEPOTS + d) * PRODUCTS + p)
  return out
}

/** Builds the day from its plan: the same plan gives the same trace in every process. */
export function buildTrace(plan: DayPlan): DayTrace {
  const rnd = seededRandom(plan.seed)
  // Popularity: Zipf(POPULARITY) over the catalogue, ranks dealt to rows by a seeded shuffle (a popular
  // product can sit in any tenant and depot), except that the HOT_ROWS most popular are the first
  // products of the first depots of the first tenants, so the day's opening read of them is one cohort.
  const byRank = Int32Array.from({ length: CATALOGUE }, (_, k) => k)
  for (let k = CATALOGUE - 1; k > 0; k--) {
    const j = Math.floor(rnd() * (k + 1))
    ;[byRank[k], byRank[j]] = [byRank[j]!, byRank[k]!]
  }
  const hotRows = hottestRows(plan.hotRows)
  const hotSet = new Set(hotRows)
  const rest = byRank.filter((k) => !hotSet.has(k))
  const ranked = Int32Array.from([...hotRows, ...rest])
  const rank = zipfFrom(CATALOGUE, POPULARITY, rnd)
  const stockRow = () => ranked[rank()]!
  const missingRow = zipfFrom(MISSING, 0.8, rnd)
  const events: { at: number; kind: number; key: number; instance: number }[] = []
  const push = (at: number, kind: number, key: number) => events.push({ at, kind, key, instance: Math.floor(rnd() * 4) })

  for (const key of hotRows) push(0, READ, key)

  const poisson = (perSec: number, each: (at: number) => void) => {
    for (let at = -Math.log(1 - rnd()) * (1000 / perSec); at < plan.dayMs; at += -Math.log(1 - rnd()) * (1000 / perSec)) each(at)
  }
  poisson(plan.readsPerSec, (at) => push(at, READ, rnd() < plan.missingShare ? CATALOGUE + missingRow() : stockRow()))
  poisson(plan.updatesPerSec, (at) => push(at, UPDATE, stockRow()))
  poisson(plan.pairsPerSec, (at) => {
    const key = stockRow()
    const instance = Math.floor(rnd() * 4)
    events.push({ at, kind: UPDATE_THEN_READ, key, instance }, { at: at + plan.pairGapMs, kind: UPDATE, key, instance })
  })
  for (const burst of plan.bursts) for (const n of burst.keys) for (let r = 0; r < plan.readersPerBurstKey; r++) push(burst.at, READ, campaignKey(n))

  events.sort((a, b) => a.at - b.at)
  const trace: DayTrace = {
    at: new Float64Array(events.length),
    kind: new Uint8Array(events.length),
    key: new Int32Array(events.length),
    instance: new Uint8Array(events.length),
    length: events.length,
  }
  events.forEach((e, i) => {
    trace.at[i] = e.at
    trace.kind[i] = e.kind
    trace.key[i] = e.key
    trace.instance[i] = e.instance
  })
  return trace
}
