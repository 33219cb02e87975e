import { performance } from 'node:perf_hooks'
import { setImmediate as nextMacrotask } from 'node:timers/promises'
import { PER_ID_FLOOR } from '../contenders/batch/floor-promise-per-id.js'
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
import { pageTrace } from './w11-pages.js'

/** The contenders W11's targets are about: EchoStore's batched reads. */
export const BATCH_SUBJECTS: readonly string[] = ['echostore getMany', 'echostore get per id']
/** The N+1 read they replace: W11's "× N+1" column is against it. */
export const N_PLUS_ONE = 'echostore fetch'
/** The peers W11's pages/s target holds them to. */
export const BATCH_PEERS = ['dataloader + lru-cache', 'cachified createBatch'] as const

/** Ids per page, the id space, the Zipf exponent. */
const PAGE_SIZE = 100
const KEY_SPACE = 5_000
const ZIPF_S = 1
/** Pages read at once. */
const IN_FLIGHT = 200
/** Timed pages at scale 1, and the untimed pages read first into a reader of their own (other ids, another seed), so the timed ones run compiled code. */
const PAGES = 20_000
const WARM_PAGES = 2_000
/**
 * Row lifetime, the same for all, longer than any run: no row expires, so every reader does the same
 * work for the same pages (the fill of the id space from cold, then hits) whatever its speed. With a
 * ttl that expires rows during the run, a faster reader reads more pages per ttl and finds fewer
 * expired, which makes it faster still.
 */
const TTL = 10 * 60 * 1_000
/** A capacity above the id space: no row is evicted. */
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

/**
 * Reads one page and checks its answer: one row per id, each the origin's. The page starts in a
 * macrotask of its own, as a request arriving on a socket does, so timers (the origin's answers,
 * the caches' clocks) run between pages even when a reader answers pages without waiting.
 */
async function readPage(contender: PageContender, reader: PageReader, ids: readonly string[], latencies?: number[]): Promise<void> {
  await nextMacrotask()
  const start = performance.now()
  const rows = await reader.read(ids)
  if (rows.length !== ids.length) throw new Error(`W11 ${contender.name}: a page of ${ids.length} ids answered ${rows.length} rows`)
  for (let i = 0; i < rows.length; i++) if (rows[i] !== ROW) throw new Error(`W11 ${contender.name}: ${ids[i]} answered ${String(rows[i])}, not its row`)
  latencies?.push(performance.now() - start)
}

/**
 * W11 the N+1 read: one seeded trace of pages of 100 distinct ids drawn from Zipf(1) over 5,000 ids,
 * read 200 pages in flight into a fresh reader per repetition, every reader in front of the same
 * bulk origin (2 ms + 20 µs per id on a real timer per call), one ttl no row outlives, capacity
 * above the id space: pages/s, origin calls, ids asked, page latency.
 */
export async function runW11(ctx: BenchContext): Promise<WorkloadResult> {
  const contenders = await pageContenders(ctx.contenders.some((c) => c.name === 'echostore'))
  const shape = { pageSize: PAGE_SIZE, keySpace: KEY_SPACE, s: ZIPF_S }
  const pages = pageTrace(makeIds('item-', KEY_SPACE), { ...shape, pages: scaled(ctx.cfg, PAGES, 1_000) }, 111)
  const warm = pageTrace(makeIds('warm-', KEY_SPACE), { ...shape, pages: scaled(ctx.cfg, WARM_PAGES, 200) }, 112)

  async function measure(contender: PageContender): Promise<PageRun> {
    const warmOrigin = bulkOrigin(COST)
    const warmReader = contender.create({ ttl: TTL, capacity: CAPACITY, origin: warmOrigin.load })
    await runConcurrent(warm.length, IN_FLIGHT, (i) => readPage(contender, warmReader, warm[i]!))
    await warmReader.close()
    const origin = bulkOrigin(COST)
    const reader = contender.create({ ttl: TTL, capacity: CAPACITY, origin: origin.load })
    const latencies: number[] = []
    const start = performance.now()
    await runConcurrent(pages.length, IN_FLIGHT, (i) => readPage(contender, reader, pages[i]!, latencies))
    const ms = performance.now() - start
    await reader.close()
    const run: PageRun = {
      pagesPerSec: (pages.length * 1000) / ms,
      calls: origin.calls,
      ids: origin.ids,
      largest: origin.largest,
      p50Ms: percentile(latencies, 50),
      p99Ms: percentile(latencies, 99),
    }
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
  const floor = metrics.get(PER_ID_FLOOR)?.pagesPerSec ?? Number.NaN
  const rows = contenders.map((contender) => {
    const m = metrics.get(contender.name)!
    const spread = pm(spreadPct(runs.get(contender.name)!.map((r) => r.pagesPerSec)))
    return [
      contender.name,
      num(m.pagesPerSec),
      spread,
      ratio(m.pagesPerSec, nPlusOne),
      ratio(m.pagesPerSec, floor),
      num(m.originCalls),
      num(m.idsAsked),
      num(m.originCalls > 0 ? m.idsAsked / m.originCalls : 0, 1),
      num(m.largestCall),
      sig(m.p50Ms),
      sig(m.p99Ms),
    ]
  })
  return {
    metrics,
    section: {
      id: 'W11',
      title: 'the N+1 read',
      method: `One seeded trace of ${num(pages.length)} pages of ${PAGE_SIZE} distinct ids, drawn from Zipf(s = ${ZIPF_S}) over ${num(KEY_SPACE)} ids, read ${IN_FLIGHT} pages in flight into a fresh reader per repetition (after ${num(warm.length)} untimed pages of other ids into a reader of their own). Every reader is in front of the same bulk origin: a call takes ${COST.perCallMs} ms + ${COST.perIdMs * 1000} µs per id on a real timer (the origin's time, outside this process, with no limit on calls at once; timers fire on whole milliseconds). One ttl for all that no row outlives, capacity ${num(CAPACITY)}: no row expires or is evicted, so each reader fills the ${num(KEY_SPACE)} ids from cold and then hits, the same work for the same pages whatever its speed. Each page starts in a macrotask of its own (as a request arriving on a socket), so timers run between pages. Page latency: from the page's read to its last row, checked (one row per id). Median over ${ctx.cfg.reps} interleaved repetitions. Higher pages/s is better; × N+1 is against ${N_PLUS_ONE} (one origin call per missing id), × floor against ${PER_ID_FLOOR} (a Map of rows, a promise per id, the misses of a tick in one call: the least a reader of a promise per id costs).`,
      tables: [
        {
          headers: ['contender', 'pages/s', 'spread', '× N+1', '× floor', 'origin calls', 'ids asked', 'ids per call', 'largest call', 'p50 page ms', 'p99 page ms'],
          rows,
        },
        {
          caption: '**Set up as**',
          headers: ['contender', 'versions', 'set up as'],
          rows: contenders.map((c) => [
            c.name,
            c.kind === 'subject' ? subjectVersion(ctx.cfg.root) : c.kind === 'floor' ? 'bench' : c.pkgs.map((p) => `${p} ${packageVersion(ctx.cfg.root, p)}`).join(', '),
            c.setup,
          ]),
        },
      ],
      notes: [
        'Ids asked above 5,000 are ids asked twice: by two pages at once, where a reader does not join a read already under way.',
        'One tick batches the misses of the pages read in it (the reads of its callback and of every promise job after it, as DataLoader does); a page that starts in its own macrotask has its misses asked in a call of their own, joined by any later page that misses the same ids while it runs.',
      ],
    },
  }
}
