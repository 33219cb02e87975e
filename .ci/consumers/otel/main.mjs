/**
 * A project with @opentelemetry/api, the SDK's tracer and the async-hooks context manager installed:
 * echostore/otel imports (ES module build) and requires (CommonJS build); under instrument(), a herd
 * of 100 in one request costs one load and makes one flight span holding the one load span, with
 * 100 waiters; uninstall() stops the spans.
 */
import { createRequire } from 'node:module'
import { context, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace'
import { createTable } from 'echostore'
import { instrument } from 'echostore/otel'
import { assertHerdOfOne } from './herd.mjs'

const required = createRequire(import.meta.url)('echostore/otel')
if (typeof required.instrument !== 'function') throw new Error('otel: require("echostore/otel") has no instrument function')

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
const exporter = new InMemorySpanExporter()
const tracerProvider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] })
const installed = instrument({ tracerProvider })
const table = createTable({ name: 'otel' })
await tracerProvider.getTracer('consumer').startActiveSpan('request', (span) => assertHerdOfOne(table, 'otel').finally(() => span.end()))
installed.uninstall()
await table.fetch('after', () => 'no span')
await tracerProvider.forceFlush()

const spans = exporter.getFinishedSpans()
const named = (name) => spans.filter((span) => span.name === name)
const flights = named('echostore.fetch').filter((span) => span.attributes['echostore.outcome'] === 'miss')
const [load] = named('echostore.load')
if (named('echostore.load').length !== 1 || flights.length !== 1) throw new Error(`otel: a herd should make one load span and one flight span, got ${spans.map((s) => s.name).join(', ')}`)
if (flights[0].attributes['echostore.waiters'] !== 100) throw new Error(`otel: the flight span should count 100 waiters, got ${flights[0].attributes['echostore.waiters']}`)
if (load.parentSpanContext?.spanId !== flights[0].spanContext().spanId) throw new Error('otel: the load span should be a child of the flight span')
if (named('echostore.fetch').length !== 100) throw new Error(`otel: 100 fetch spans expected (1 miss, 99 coalesced), got ${named('echostore.fetch').length}`)
await table.close()
await tracerProvider.shutdown()
trace.disable()
console.log('pass otel: echostore/otel imports and requires; a herd of 100 is one flight span with 100 waiters holding its one load span; nothing after uninstall()')
