import { tracingChannel } from 'node:diagnostics_channel'
import { performance } from 'node:perf_hooks'
import { MeterProvider } from '@opentelemetry/sdk-metrics'
import { TracerProvider } from '@opentelemetry/sdk-trace'
import { instrument } from '../../src/otel.js'
import { createTable, type LoaderContext } from '../../src/index.js'
import type { Row } from '../contenders/types.js'
import type { Contender } from '../contenders/types.js'
import { num, pm, ratio, sig } from '../lib/format.js'
import { interleave } from '../lib/interleave.js'
import { runConcurrent } from '../lib/pool.js'
import { makeIds, uniformSequence } from '../lib/random.js'
import { ROW } from '../lib/row.js'
import { median, spreadPct } from '../lib/stats.js'
import { floorMedian, floorNamed, type BenchContext, type WorkloadResult } from './context.js'

const ROWS = 10_000
const MASK = (1 << 16) - 1
const BATCH = 1024

/** A variant of the subject that runs with something listening on the tracing channels, from its creation to its close. */
function listening(subject: Contender, name: string, listen: () => () => void): Contender {
  return {
    ...subject,
    name,
    create(options) {
      const stop = listen()
      const cache = subject.create(options)
      return { ...cache, close: () => cache.close().finally(stop) }
    },
  }
}

/** Subscribes handlers that do nothing to every event of `echostore:fetch`, `echostore:load` and `echostore:l2`; returns the unsubscribe. */
function idleSubscriber(): () => void {
  const nothing = (): void => {}
  const handlers = { start: nothing, end: nothing, asyncStart: nothing, asyncEnd: nothing, error: nothing }
  const channels = ['echostore:fetch', 'echostore:load', 'echostore:l2'].map((name) => tracingChannel(name))
  for (const channel of channels) channel.subscribe(handlers)
  return () => channels.forEach((channel) => channel.unsubscribe(handlers))
}

/** `echostore/otel` with the OpenTelemetry SDK's providers (metrics aggregated in memory; spans made and dropped). */
function otelSdk(): () => void {
  const installed = instrument({ tracerProvider: new TracerProvider(), meterProvider: new MeterProvider() })
  return () => installed.uninstall()
}

/** Tags the tagged variant's rows carry: 64 depots. */
const DEPOTS = 64

/**
 * EchoStore with every row tagged (its loader calls `setTags([depot])`), on a table where one other
 * tag was invalidated first: every row is checked against its tag once, then answers from its mark
 * of the tags' epoch, which is what a hit on a tagged row costs between invalidations.
 */
function taggedRows(subject: Contender): Contender {
  return {
    ...subject,
    name: `${subject.name}, tagged rows`,
    create({ ttl, capacity, loader }) {
      const table = createTable<Row>({ name: 'bench-tagged', ttl, capacity })
      const invalidated = table.invalidateTags(['another-depot'])
      let n = 0
      const load = (id: string, { setTags }: LoaderContext) => {
        setTags([`depot:${n++ % DEPOTS}`])
        return loader(id)
      }
      return {
        fetch: (id) => table.fetch(id as string, load),
        close: async () => {
          await invalidated
          await table.close()
        },
        swept: () => table.stats().swept,
        size: () => table.stats().size,
      }
    },
  }
}

/**
 * W1 hit: 10k rows pre-filled, then `await fetch()` on random existing ids, one at a time, for a
 * time budget (500 ms at scale 1, after a quarter of that untimed to warm up): ns per read. The loader is counted during the timed reads, so a
 * contender that misses there shows it.
 */
export async function runW1(ctx: BenchContext): Promise<WorkloadResult> {
  const ids = makeIds('hit-', ROWS)
  const picks = uniformSequence(MASK + 1, ROWS, 11)
  const budgetMs = Math.max(25, 500 * ctx.cfg.scale)

  async function measure(contender: Contender) {
    let loads = 0
    const cache = contender.create({ ttl: 600_000, capacity: ROWS, loader: () => (loads++, ROW) })
    await runConcurrent(ROWS, 64, (i) => cache.fetch(ids[i]!))
    let j = 0
    const warmUntil = performance.now() + budgetMs / 4
    while (performance.now() < warmUntil) for (let k = 0; k < BATCH; k++) await cache.fetch(ids[picks[j++ & MASK]!]!)
    loads = 0
    let ops = 0
    const start = performance.now()
    let elapsed = 0
    do {
      for (let k = 0; k < BATCH; k++) await cache.fetch(ids[picks[j++ & MASK]!]!)
      ops += BATCH
      elapsed = performance.now() - start
    } while (elapsed < budgetMs)
    await cache.close()
    return { nsPerOp: (elapsed * 1e6) / ops, loads }
  }

  const subject = ctx.contenders.find((c) => c.kind === 'subject')
  const traced =
    subject === undefined ? [] : [listening(subject, `${subject.name} + idle channel subscriber`, idleSubscriber), listening(subject, `${subject.name} + echostore/otel`, otelSdk), taggedRows(subject)]
  const runs = await interleave('W1 hit', [...ctx.contenders, ...traced], ctx.cfg.reps, measure)
  const floor = floorNamed(ctx, 'floor:map')
  const floorNs = floorMedian(floor, runs, (r) => r.nsPerOp)
  const metrics = new Map<string, Record<string, number>>()
  const rows: string[][] = []
  for (const contender of ctx.contenders) {
    const list = runs.get(contender.name)!
    const ns = list.map((r) => r.nsPerOp)
    const nsPerOp = median(ns)
    metrics.set(contender.name, { nsPerOp })
    rows.push([contender.name, sig(nsPerOp), pm(spreadPct(ns)), num(1e9 / nsPerOp), ratio(nsPerOp, floorNs), num(Math.max(...list.map((r) => r.loads)))])
  }
  const tracing: string[][] = []
  const plainNs = subject === undefined ? Number.NaN : median(runs.get(subject.name)!.map((r) => r.nsPerOp))
  for (const [variant, key] of [
    [subject, 'nsPerOp'],
    [traced[0], 'nsPerOpSubscribed'],
    [traced[1], 'nsPerOpOtel'],
    [traced[2], 'nsPerOpTagged'],
  ] as const) {
    if (variant === undefined) continue
    const ns = runs.get(variant.name)!.map((r) => r.nsPerOp)
    const nsPerOp = median(ns)
    if (variant !== subject) metrics.get(subject!.name)![key] = nsPerOp
    tracing.push([variant.name, sig(nsPerOp), pm(spreadPct(ns)), ratio(nsPerOp, plainNs), ratio(nsPerOp, floorNs)])
  }
  return {
    metrics,
    section: {
      id: 'W1',
      title: 'hit',
      method: `${num(ROWS)} rows pre-filled (ttl 10 min), then \`await fetch(id)\` one at a time on uniformly random existing ids for ${num(budgetMs)} ms per repetition (after ${num(budgetMs / 4)} ms untimed); median over ${ctx.cfg.reps} interleaved repetitions. Lower is better; × floor is against the raw-Map floor.`,
      tables: [
        { headers: ['contender', 'ns/op', 'spread', 'reads/s', '× floor:map', 'loader calls in timed reads'], rows },
        ...(tracing.length > 1 ? [{ headers: ['the same hits, with', 'ns/op', 'spread', '× the plain subject', '× floor:map'], rows: tracing }] : []),
      ],
      notes: [
        'The second table measures the subject in the same interleaved repetitions with nobody listening on its diagnostics channels (its own row above), with a subscriber that does nothing on every event of `echostore:fetch`, `echostore:load` and `echostore:l2`, and with `echostore/otel` installed on the OpenTelemetry SDK (a hit makes no span: one fetch-outcome counter add). Without a subscriber the hit path only asks whether the fetch channel has one.',
        `The last row is the subject with every row tagged (one of ${DEPOTS} depots, by \`setTags\` in its loader) after another tag was invalidated: each row checks its tag once, then answers from its mark of the tags' epoch. A table that never tags a row never makes the tag columns.`,
      ],
    },
  }
}
