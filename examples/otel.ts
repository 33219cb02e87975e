/**
 * Tracing a cache with OpenTelemetry: `instrument()` from `echostore/otel` turns EchoStore's
 * diagnostics channels into spans and metrics. Three requests for one cold user arrive at once (a
 * herd); each runs in a request span of its own, as an HTTP server's instrumentation would make it.
 * The example prints the spans of each request as a tree, then the fetch outcomes the meter counted.
 *
 * Run:  npx tsx examples/otel.ts
 *
 * Look for: ONE `echostore.fetch` span with `outcome=miss` and `waiters=3` (the request that started
 * the flight) holding the flight's L2 read, its one `echostore.load` and its L2 write; the other two
 * requests each hold an `echostore.fetch` with `outcome=coalesced`, linked to that flight's span; a
 * fourth request, a hit, makes no span at all (only a fetch outcome).
 */
import { context, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics'
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace'
import { createTable, memoryL2 } from 'echostore'
import { instrument } from 'echostore/otel'

// The SDK, as an application sets it up (here in memory, so the example can print what it got).
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
const spans = new InMemorySpanExporter()
const tracerProvider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: spans })] })
const metrics = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE)
const reader = new PeriodicExportingMetricReader({ exporter: metrics, exportIntervalMillis: 3_600_000 })
const meterProvider = new MeterProvider({ readers: [reader] })
trace.setGlobalTracerProvider(tracerProvider)

const instrumentation = instrument({ tracerProvider, meterProvider, recordIds: true })

type User = { id: string; name: string }
const users = createTable<User>({ name: 'users', ttl: 60_000, l2: memoryL2() })
const db = { user: (id: string) => new Promise<User>((resolve) => setTimeout(() => resolve({ id, name: 'Ada Lovelace' }), 20)) }

/** A request handler: one span per request, as an HTTP server instrumentation makes it. */
const tracer = trace.getTracer('example-server')
function handle(request: string, id: string): Promise<User> {
  return tracer.startActiveSpan(`GET /users/${id} (${request})`, (span) => users.fetch(id, (key) => db.user(key)).finally(() => span.end()))
}

await Promise.all(['request 1', 'request 2', 'request 3'].map((request) => handle(request, 'ada')))
await handle('request 4', 'ada') // a hit
await tracerProvider.forceFlush()
const finished = spans.getFinishedSpans()

/** The span's start, duration and attributes on one line, indented by its depth. */
function line(span: ReadableSpan, depth: number, origin: number): string {
  const ms = (time: [number, number]) => time[0] * 1e3 + time[1] / 1e6
  const at = (ms(span.startTime) - origin).toFixed(1).padStart(6)
  const took = (ms(span.endTime) - ms(span.startTime)).toFixed(1).padStart(6)
  const attributes = Object.entries(span.attributes).map(([key, value]) => `${key.replace(/^echostore\./, '')}=${String(value)}`)
  const links = span.links.map((link) => `link→${link.context.spanId.slice(0, 6)}`)
  return `${at} ms +${took} ms  ${'  '.repeat(depth)}${span.name} ${span.spanContext().spanId.slice(0, 6)}  ${[...attributes, ...links].join(' ')}`
}

const childrenOf = (parent: string | undefined) =>
  finished.filter((span) => span.parentSpanContext?.spanId === parent).sort((a, b) => a.startTime[1] - b.startTime[1] + (a.startTime[0] - b.startTime[0]) * 1e9)
const origin = Math.min(...finished.map((span) => span.startTime[0] * 1e3 + span.startTime[1] / 1e6))
function print(span: ReadableSpan, depth: number): void {
  console.log(line(span, depth, origin))
  for (const child of childrenOf(span.spanContext().spanId)) print(child, depth + 1)
}
for (const root of childrenOf(undefined).sort((a, b) => a.name.localeCompare(b.name))) {
  console.log(`\ntrace ${root.spanContext().traceId.slice(0, 8)}`)
  print(root, 0)
}

await reader.forceFlush()
const fetches = metrics
  .getMetrics()
  .flatMap((resource) => resource.scopeMetrics.flatMap((scope) => scope.metrics))
  .find((metric) => metric.descriptor.name === 'echostore.fetches')!
const outcomes = Object.fromEntries(fetches.dataPoints.map((point) => [String(point.attributes['echostore.outcome']), point.value as number]))
console.log('\nechostore.fetches by outcome:', outcomes)

const stats = users.stats()
const count = (name: string) => finished.filter((span) => span.name === name).length
const flight = finished.find((span) => span.attributes['echostore.outcome'] === 'miss')!
console.log(
  `RESULT ${JSON.stringify({
    requests: 4,
    fetchSpans: count('echostore.fetch'),
    loadSpans: count('echostore.load'),
    l2Spans: count('echostore.l2'),
    waiters: flight.attributes['echostore.waiters'],
    outcomes,
    loads: stats.loads,
    misses: stats.misses,
    coalesced: stats.coalesced,
    hits: stats.hits,
  })}`,
)

instrumentation.uninstall()
await users.close()
await Promise.all([tracerProvider.shutdown(), meterProvider.shutdown()])
