/**
 * What a fill costs on this machine: an L2 hit (Redis) against a loader call.
 *
 * Each case reads `N` cold ids one at a time (one fetch in flight, so each figure is the latency of
 * one fill as a caller sees it: `fetch` called → value in hand) and reports the median, p90, p99 and
 * mean in µs:
 *
 *   - L2 hit:                 table B (cold L1, its own connection) reads ids table A already filled:
 *                             one Redis round trip (a Lua GET + PTTL) and a JSON decode, no loader;
 *   - miss + L2, immediate:   table A's own fills: L2 get (a miss), the loader, the L2 write (version-guarded);
 *   - miss + L2, 1 ms origin: the same with a loader that answers after setTimeout(1 ms);
 *   - no L2, immediate:       the flight alone (no Redis), an immediate loader;
 *   - no L2, 1 ms origin:     the flight alone, a 1 ms origin;
 *   - L1 hit:                 for scale, a read of a live row.
 *
 * The value is a small JSON object (~150 bytes). Every case warms up on its own ids first. Timing
 * figures vary by machine and load (tails most of all); this script prints them, nothing asserts
 * them. "l2 failures" counts L2 calls that errored, timed out (the 50 ms bound) or were skipped by
 * the breaker: under heavy load a slow call becomes a miss, which the figures would include.
 *
 * Run: `npx tsx examples/l2-latency.ts` (Redis at `REDIS_URL`, default redis://127.0.0.1:6379;
 * `L2_LATENCY_N` ids per case, default 2000). Keys go under a random prefix, deleted at the end.
 */
import { randomBytes } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import { type Loader, type Table, createTable } from 'echostore'
import { redisL2 } from 'echostore/redis'
import { REDIS_URL, deletePrefix, requireRedis } from './support/redis.js'

const N = Number(process.env.L2_LATENCY_N ?? 2_000)
if (!(Number.isInteger(N) && N >= 100)) throw new RangeError(`L2_LATENCY_N must be an integer ≥ 100, got ${process.env.L2_LATENCY_N}`)
const WARMUP = 300
const TABLE = 'products'

type Product = { id: string; name: string; tags: string[]; price: { amount: number; currency: string }; updatedAt: number }

const product = (id: string | number): Product => ({
  id: String(id),
  name: `Product ${id}`,
  tags: ['kitchen', 'steel', 'sale'],
  price: { amount: 1999, currency: 'EUR' },
  updatedAt: 1_700_000_000_000,
})
const immediate: Loader<Product> = (id) => product(id)
const oneMs: Loader<Product> = (id) => new Promise((resolve) => setTimeout(() => resolve(product(id)), 1))

type Summary = { case: string; n: number; median: number; p90: number; p99: number; mean: number; loads: number; l2_hits: number; l2_failures: number }

/** Reads `ids` one at a time through `table`; returns each fill's latency in µs. */
async function measure(table: Table<Product>, ids: string[], loader: Loader<Product>): Promise<number[]> {
  const us: number[] = []
  for (const id of ids) {
    const started = performance.now()
    const value = await table.fetch(id, loader)
    us.push((performance.now() - started) * 1_000)
    if (value?.id !== id) throw new Error(`wrong value for ${id}: ${JSON.stringify(value)}`)
  }
  return us
}

function summarise(label: string, us: number[], table: Table<Product>): Summary {
  const sorted = [...us].sort((x, y) => x - y)
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!
  const stats = table.stats()
  return {
    case: label,
    n: us.length,
    median: at(0.5),
    p90: at(0.9),
    p99: at(0.99),
    mean: us.reduce((s, x) => s + x, 0) / us.length,
    loads: stats.loads,
    l2_hits: stats.l2_hits,
    l2_failures: stats.l2_errors + stats.l2_timeouts + stats.l2_skipped,
  }
}

const ids = (tag: string, n: number) => Array.from({ length: n }, (_, i) => `${tag}-${i}`)

async function main(): Promise<void> {
  await requireRedis('examples/l2-latency.ts')
  const prefix = `echostore-example:l2-latency:${randomBytes(6).toString('hex')}:`
  console.log(`Fill latency on this machine: Node ${process.version}, Redis ${REDIS_URL}, ${N} cold ids per case (after ${WARMUP} warm-up reads), one fetch in flight\n`)
  const results: Summary[] = []
  // A generous bound per L2 call: this measures latency, not the failure policy, and a machine busy
  // with other work (or the first connection) must not turn a slow read into a counted timeout.
  const storeA = redisL2({ url: REDIS_URL, prefix, timeout: 1_000 })
  const storeB = redisL2({ url: REDIS_URL, prefix, timeout: 1_000 })
  const opts = { name: TABLE, ttl: 600_000, jitter: 0.1, sweepInterval: 600_000 }
  const a = createTable<Product>({ ...opts, l2: storeA })
  const b = createTable<Product>({ ...opts, l2: storeB })
  const a1ms = createTable<Product>({ ...opts, l2: storeA })
  const bare = createTable<Product>({ ...opts })
  const bare1ms = createTable<Product>({ ...opts })
  try {
    // Table A fills: L2 miss + immediate loader + L2 write. These are the entries B reads next.
    await measure(a, ids('warm-a', WARMUP), immediate)
    const filled = ids('cold', N)
    results.push(summarise('miss + L2, immediate loader', await measure(a, filled, immediate), a))

    // Table B: the same ids, cold in its L1, warm in Redis: L2-hit fills.
    await measure(b, ids('warm-a', WARMUP), immediate)
    const l2hit = await measure(b, filled, () => {
      throw new Error('B must not load: every id is in Redis')
    })
    results.push(summarise('L2 hit (table B)', l2hit, b))

    await measure(a1ms, ids('warm-1ms', WARMUP), oneMs)
    results.push(summarise('miss + L2, 1 ms origin', await measure(a1ms, ids('cold-1ms', N), oneMs), a1ms))

    await measure(bare, ids('warm-bare', WARMUP), immediate)
    results.push(summarise('no L2, immediate loader', await measure(bare, ids('cold', N), immediate), bare))

    await measure(bare1ms, ids('warm-bare', WARMUP), oneMs)
    results.push(summarise('no L2, 1 ms origin', await measure(bare1ms, ids('cold', N), oneMs), bare1ms))

    results.push(summarise('L1 hit (table B, live rows)', await measure(b, filled, immediate), b))
  } finally {
    await Promise.all([a.close(), b.close(), a1ms.close(), bare.close(), bare1ms.close()])
    await Promise.all([storeA.close(), storeB.close()])
  }
  const deleted = await deletePrefix(prefix)

  const fmt = (x: number) => (x < 10 ? x.toFixed(2) : x < 100 ? x.toFixed(1) : x.toFixed(0)).padStart(8)
  console.log(`${'case'.padEnd(30)}${'median µs'.padStart(10)}${'p90 µs'.padStart(9)}${'p99 µs'.padStart(9)}${'mean µs'.padStart(9)}   loads  l2_hits  l2 failures (table totals, warm-up included)`)
  for (const r of results) {
    console.log(
      `${r.case.padEnd(30)}${fmt(r.median)}  ${fmt(r.p90)} ${fmt(r.p99)} ${fmt(r.mean)}   ${String(r.loads).padStart(5)}  ${String(r.l2_hits).padStart(7)}  ${String(r.l2_failures).padStart(11)}`,
    )
  }
  const hit = results.find((r) => r.case.startsWith('L2 hit'))!
  const miss1 = results.find((r) => r.case === 'miss + L2, 1 ms origin')!
  console.log(
    `\nAn L2-hit fill takes ${hit.median.toFixed(0)} µs (median), ${hit.p99.toFixed(0)} µs (p99); ` +
      `a fill from a 1 ms origin through the same table takes ${miss1.median.toFixed(0)} µs (median), ${miss1.p99.toFixed(0)} µs (p99).`,
  )
  console.log(`Cleaned up ${deleted} key(s) under ${prefix}`)
  console.log(`RESULT ${JSON.stringify(results.map((r) => ({ ...r, median: +r.median.toFixed(1), p90: +r.p90.toFixed(1), p99: +r.p99.toFixed(1), mean: +r.mean.toFixed(1) })))}`)
}

await main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error)
  process.exit(1)
})
