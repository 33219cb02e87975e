import { performance } from 'node:perf_hooks'
import { pageContenders } from '../contenders/batch/index.js'
import type { PageContender, PageReader } from '../contenders/batch/types.js'
import { bulkOrigin, type BulkCost } from '../lib/bulk-origin.js'
import { scaled } from '../lib/config.js'
import { num, pm, ratio, sig } from '../lib/format.js'
import { interleave } from '../lib/interleave.js'
import { packageVersion, subjectVersion } from '../lib/machine.js'
import { runConcurrent } from '../lib/pool.js'
import { progress } from '../lib/progress.js'
import { makeIds } from '../lib/random.js'
import { ROW } from '../lib/row.js'
import { median, percentile, spreadPct } from '../lib/stats.js'
import type { BenchContext, Metrics, WorkloadResult } from './context.js'
import { pageTrace, type PageShape } from './w11-pages.js'

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
/** Timed pages per repetition at scale 1, and the untimed pages before them. */
const PAGES = 20_000
const WARM_PAGES = 5_000
/** Row lifetime (the same for all), and a capacity above the id space so no row is evicted. */
const TTL = 100
const CAPACITY = 2 * KEY_SPACE
/** One origin call: a fixed cost and a cost per id, on a real timer. */
const COST: BulkCost = { perCallMs: 2, perIdMs: 0.02 }

/** One repetition of one contender. */
interface PageRun {
  pagesPerSec: number
  calls: number
  ids: number
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
 * W11 the N+1 read: pages of 100 distinct ids drawn from Zipf(1) over 5,000 ids (one seeded trace for
 * all), 200 pages in flight, every reader in front of the same bulk origin (2 ms + 20 µs per id on
 * a real timer per call), ttl 1 s, capacity above the id space. After untimed pages into the same
 * reader, the timed ones: pages/s, origin calls, ids asked, page latency.
 */
export async function runW11(ctx: BenchContext): Promise<WorkloadResult> {
  const contenders = await pageContenders(ctx.contenders.some((c) => c.name === 'echostore'))
  const ids = makeIds('item-', KEY_SPACE)
  const shape = (pages: number): PageShape => ({ pages, pageSize: PAGE_SIZE, keySpace: KEY_SPACE, s: ZIPF_S })
  const pages = pageTrace(ids, shape(scaled(ctx.cfg, PAGES, 400)), 111)
  const warm = pageTrace(ids, shape(scaled(ctx.cfg, WARM_PAGES, IN_FLIGHT)), 112)

  async function measure(contender: PageContender): Promise<PageRun> {
    const origin = bulkOrigin(COST)
    const reader = contender.create({ ttl: TTL, capacity: CAPACITY, origin: origin.load })
    await runConcurrent(warm.length, IN_FLIGHT, (i) => readPage(contender, reader, warm[i]!))
    origin.reset()
    const latencies = new Array<number>(pages.length)
    const start = performance.now()
    await runConcurrent(pages.length, IN_FLIGHT, async (i) => {
      const t = performance.now()
      await readPage(contender, reader, pages[i]!)
      latencies[i] = performance.now() - t
    })
    const ms = performance.now() - start
    await reader.close()
    const run = { pagesPerSec: (pages.length * 1000) / ms, calls: origin.calls, ids: origin.ids, largest: origin.largest, p50Ms: percentile(latencies, 50), p99Ms: percentile(latencies, 99) }
    progress(`W11 · ${contender.name}: ${num(run.pagesPerSec)} pages/s, ${num(run.calls)} origin calls, ${num(run.ids)} ids asked`)
    return run
  }

  const runs = await interleave('W11 N+1 read', contenders, ctx.cfg.reps, measure)
  const metrics: Metrics = new Map()
  for (const contender of contenders) {
    const list = runs.get(contender.name)!
    const pick = (key: keyof PageRun) => median(list.map((r) => r[key]))
    metrics.set(contender.name, { pagesPerSec: pick('pagesPerSec'), originCalls: pick('calls'), idsAsked: pick('ids'), largestCall: pick('largest'), p50Ms: pick('p50Ms'), p99Ms: pick('p99Ms') })
  }
  const nPlusOne = metrics.get(N_PLUS_ONE)?.pagesPerSec ?? Number.NaN
  const rows = contenders.map((contender) => {
    const m = metrics.get(contender.name)!
    const spread = pm(spreadPct(runs.get(contender.name)!.map((r) => r.pagesPerSec)))
    return [
      contender.name,
      num(m.pagesPerSec),
      spread,
      ratio(m.pagesPerSec, nPlusOne),
      num(m.originCalls),
      num(m.idsAsked),
      num(m.originCalls > 0 ? m.idsAsked / m.originCalls : 0, 1),
      num(m.largestCall),
      num(m.idsAsked / pages.length, 2),
      sig(m.p50Ms),
      sig(m.p99Ms),
    ]
  })
  return {
    metrics,
    section: {
      id: 'W11',
      title: 'the N+1 read',
      method: `${num(pages.length)} pages of ${PAGE_SIZE} distinct ids, drawn from Zipf(s = ${ZIPF_S}) over ${num(KEY_SPACE)} ids with a seeded PRNG (one trace for all), ${IN_FLIGHT} pages in flight, each reader in front of the same bulk origin: a call takes ${COST.perCallMs} ms + ${COST.perIdMs * 1000} µs per id on a real timer (the origin's time, outside this process; timers fire on whole milliseconds). ttl ${num(TTL)} ms for all, capacity ${num(CAPACITY)} (no row is evicted), after ${num(warm.length)} untimed pages into the same reader. Page latency: from the page's read to its last row. Median over ${ctx.cfg.reps} interleaved repetitions. Higher pages/s is better; × N+1 is against ${N_PLUS_ONE} (one origin call per missing id).`,
      tables: [
        {
          headers: ['contender', 'pages/s', 'spread', '× N+1', 'origin calls', 'ids asked', 'ids per call', 'largest call', 'ids asked per page', 'p50 page ms', 'p99 page ms'],
          rows,
        },
        {
          caption: '**Set up as**',
          headers: ['contender', 'versions', 'set up as'],
          rows: contenders.map((c) => [c.name, c.kind === 'subject' ? subjectVersion(ctx.cfg.root) : c.pkgs.map((p) => `${p} ${packageVersion(ctx.cfg.root, p)}`).join(', '), c.setup]),
        },
      ],
      notes: [
        'The ttl runs on the real clock, so a reader that takes longer over the same pages sees more rows expire: origin calls and ids asked depend a little on speed.',
        "EchoStore's rows live ttl ± its default jitter (0.1); the peers' rows live exactly ttl.",
      ],
    },
  }
}

