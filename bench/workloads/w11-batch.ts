import { performance } from 'node:perf_hooks'
import { pageContenders } from '../contenders/batch/index.js'
import type { PageContender, PageReader } from '../contenders/batch/types.js'
import { bulkOrigin, type BulkCost } from '../lib/bulk-origin.js'
import { scaled } from '../lib/config.js'
import { num, pm, ratio, sig } from '../lib/format.js'
import { interleave } from '../lib/interleave.js'
import { packageVersion, subjectVersion } from '../lib/machine.js'
import { runConcurrentUntil } from '../lib/pool.js'
import { progress } from '../lib/progress.js'
import { makeIds } from '../lib/random.js'
import { ROW } from '../lib/row.js'
import { median, percentile, spreadPct } from '../lib/stats.js'
import type { BenchContext, Metrics, WorkloadResult } from './context.js'
import { pageTrace } from './w11-pages.js'

/** The contender W11's targets are about, the N+1 read it replaces, and the peers it is held to. */
export const BATCH_SUBJECT = 'echostore getMany'
export const N_PLUS_ONE = 'echostore fetch'
export const BATCH_PEERS = ['dataloader + lru-cache', 'cachified createBatch'] as const

/** Ids per page, the id space, the Zipf exponent. */
const PAGE_SIZE = 100
const KEY_SPACE = 5_000
const ZIPF_S = 1
/** Pages read at once. */
const IN_FLIGHT = 200
/** Pages in the trace at scale 1 (read in order from its start, from the top again at its end). */
const TRACE_PAGES = 40_000
/** The timed window at scale 1, and the untimed reading before it (into the same reader: the cache reaches its steady state). */
const WINDOW_MS = 2_000
const WARM_MS = 500
/** Row lifetime (the same for all: the window spans 8 of them), and a capacity above the id space so no row is evicted. */
const TTL = 250
const CAPACITY = 2 * KEY_SPACE
/** One origin call: a fixed cost and a cost per id, on a real timer. */
const COST: BulkCost = { perCallMs: 2, perIdMs: 0.02 }

/** One repetition of one contender. */
interface PageRun {
  pagesPerSec: number
  callsPer1kPages: number
  idsPerPage: number
  idsPerCall: number
  largest: number
  p50Ms: number
  p99Ms: number
}

/** Reads one page and checks its answer: one row per id, each the origin's. */
async function readPage(contender: PageContender, reader: PageReader, ids: readonly string[]): Promise<void> {
  const rows = await reader.read(ids)
  if (rows.length !== ids.length) throw new Error(`W11 ${contender.name}: a page of ${ids.length} ids answered ${rows.length} rows`)
  for (let i = 0; i < rows.length; i++) if (rows[i] !== ROW) throw new Error(`W11 ${contender.name}: ${ids[i]} answered ${String(rows[i])}, not its row`)
}

/**
 * W11 the N+1 read: one seeded trace of pages of 100 distinct ids drawn from Zipf(1) over 5,000 ids,
 * read 200 pages in flight through each reader, every reader in front of the same bulk origin
 * (2 ms + 20 µs per id on a real timer per call), ttl 250 ms, capacity above the id space. After
 * 500 ms of untimed pages into the same reader, a timed window of 2 s (BENCH_SCALE scales both, and
 * the trace): pages/s, origin calls per 1,000 pages, ids asked per page, page latency.
 */
export async function runW11(ctx: BenchContext): Promise<WorkloadResult> {
  const contenders = await pageContenders(ctx.contenders.some((c) => c.name === 'echostore'))
  const ids = makeIds('item-', KEY_SPACE)
  const trace = pageTrace(ids, { pages: scaled(ctx.cfg, TRACE_PAGES, 2_000), pageSize: PAGE_SIZE, keySpace: KEY_SPACE, s: ZIPF_S }, 111)
  const windowMs = Math.max(250, WINDOW_MS * ctx.cfg.scale)
  const warmMs = Math.max(TTL, WARM_MS * ctx.cfg.scale)
  const page = (i: number) => trace[i % trace.length]!

  async function measure(contender: PageContender): Promise<PageRun> {
    const origin = bulkOrigin(COST)
    const reader = contender.create({ ttl: TTL, capacity: CAPACITY, origin: origin.load })
    const warmPages = await runConcurrentUntil(performance.now() + warmMs, IN_FLIGHT, (i) => readPage(contender, reader, page(i)))
    origin.reset()
    const latencies: number[] = []
    const start = performance.now()
    const pages = await runConcurrentUntil(start + windowMs, IN_FLIGHT, async (i) => {
      const t = performance.now()
      await readPage(contender, reader, page(warmPages + i))
      latencies.push(performance.now() - t)
    })
    const ms = performance.now() - start
    await reader.close()
    const run: PageRun = {
      pagesPerSec: (pages * 1000) / ms,
      callsPer1kPages: (origin.calls * 1000) / pages,
      idsPerPage: origin.ids / pages,
      idsPerCall: origin.calls > 0 ? origin.ids / origin.calls : 0,
      largest: origin.largest,
      p50Ms: percentile(latencies, 50),
      p99Ms: percentile(latencies, 99),
    }
    progress(`W11 · ${contender.name}: ${num(run.pagesPerSec)} pages/s, ${num(run.callsPer1kPages, 1)} origin calls and ${num(run.idsPerPage * 1000)} ids asked per 1,000 pages`)
    return run
  }

  const runs = await interleave('W11 N+1 read', contenders, ctx.cfg.reps, measure)
  const metrics: Metrics = new Map()
  for (const contender of contenders) {
    const list = runs.get(contender.name)!
    const pick = (key: keyof PageRun) => median(list.map((r) => r[key]))
    metrics.set(contender.name, {
      pagesPerSec: pick('pagesPerSec'),
      originCalls: pick('callsPer1kPages'),
      idsAsked: pick('idsPerPage'),
      idsPerCall: pick('idsPerCall'),
      largestCall: pick('largest'),
      p50Ms: pick('p50Ms'),
      p99Ms: pick('p99Ms'),
    })
  }
  const nPlusOne = metrics.get(N_PLUS_ONE)?.pagesPerSec ?? Number.NaN
  const rows = contenders.map((contender) => {
    const m = metrics.get(contender.name)!
    const spread = pm(spreadPct(runs.get(contender.name)!.map((r) => r.pagesPerSec)))
    return [contender.name, num(m.pagesPerSec), spread, ratio(m.pagesPerSec, nPlusOne), num(m.originCalls, 1), num(m.idsAsked, 2), num(m.idsPerCall, 1), num(m.largestCall), sig(m.p50Ms), sig(m.p99Ms)]
  })
  return {
    metrics,
    section: {
      id: 'W11',
      title: 'the N+1 read',
      method: `One seeded trace of ${num(trace.length)} pages of ${PAGE_SIZE} distinct ids, drawn from Zipf(s = ${ZIPF_S}) over ${num(KEY_SPACE)} ids, read in order from its start by every reader (a faster one gets further), ${IN_FLIGHT} pages in flight, each reader in front of the same bulk origin: a call takes ${COST.perCallMs} ms + ${COST.perIdMs * 1000} µs per id on a real timer (the origin's time, outside this process, with no limit on calls at once; timers fire on whole milliseconds). ttl ${num(TTL)} ms for all, capacity ${num(CAPACITY)} (no row is evicted). ${num(warmMs)} ms of untimed pages into the same reader, then a timed window of ${num(windowMs)} ms (pages started in it are waited for). Origin calls and ids asked are per page read, so readers that read different numbers of pages compare. Page latency: from the page's read to its last row. Median over ${ctx.cfg.reps} interleaved repetitions. Higher pages/s is better; × N+1 is against ${N_PLUS_ONE} (one origin call per missing id).`,
      tables: [
        {
          headers: ['contender', 'pages/s', 'spread', '× N+1', 'origin calls per 1,000 pages', 'ids asked per page', 'ids per call', 'largest call', 'p50 page ms', 'p99 page ms'],
          rows,
        },
        {
          caption: '**Set up as**',
          headers: ['contender', 'versions', 'set up as'],
          rows: contenders.map((c) => [c.name, c.kind === 'subject' ? subjectVersion(ctx.cfg.root) : c.pkgs.map((p) => `${p} ${packageVersion(ctx.cfg.root, p)}`).join(', '), c.setup]),
        },
      ],
      notes: [
        'The ttl runs on the real clock and the pages are read as fast as each reader goes, so a faster reader reads more pages per ttl and finds fewer of them expired: origin calls and ids asked per page depend on speed.',
        "EchoStore's rows live ttl ± its default jitter (0.1); the peers' rows live exactly ttl.",
      ],
    },
  }
}

