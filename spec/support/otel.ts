/**
 * The OpenTelemetry SDK in memory, for specs: a tracer provider whose spans go to an
 * in-memory exporter, a meter provider read on demand into an in-memory metric exporter, and the
 * async-hooks context manager (so a span started in a request is the parent of what the request does).
 */
import { type Tracer, context } from '@opentelemetry/api'
import { afterEach, beforeEach } from 'vitest'
import { type Instrumentation, instrument } from '../../src/otel.js'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader, type ScopeMetrics } from '@opentelemetry/sdk-metrics'
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace'

/** One data point of a metric: its attributes and its value (a sum, or a histogram's count and sum). */
export interface Point {
  attributes: Record<string, unknown>
  value: number | { count: number; sum?: number }
}

/** A fresh SDK: providers, what they exported, and `shutdown()`. */
export function telemetry() {
  const manager = new AsyncLocalStorageContextManager().enable()
  context.setGlobalContextManager(manager)
  const spanExporter = new InMemorySpanExporter()
  const tracerProvider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: spanExporter })] })
  const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE)
  const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 3_600_000 })
  const meterProvider = new MeterProvider({ readers: [reader] })
  /** What the meter provider holds now, per instrumentation scope (each with its metrics). */
  const scopes = async (): Promise<ScopeMetrics[]> => {
    metricExporter.reset()
    await reader.forceFlush()
    return metricExporter.getMetrics().flatMap((r) => r.scopeMetrics)
  }
  return {
    tracerProvider,
    meterProvider,
    /** Every span ended so far. */
    async spans(): Promise<ReadableSpan[]> {
      await tracerProvider.forceFlush()
      return spanExporter.getFinishedSpans()
    },
    scopes,
    /** The data points of the metric `name` now (empty when it has none). */
    async points(name: string): Promise<Point[]> {
      const metrics = (await scopes()).flatMap((s) => s.metrics)
      return metrics.filter((m) => m.descriptor.name === name).flatMap((m) => m.dataPoints.map((p) => ({ attributes: { ...p.attributes }, value: p.value as Point['value'] })))
    },
    async shutdown(): Promise<void> {
      await Promise.all([tracerProvider.shutdown(), meterProvider.shutdown()])
      context.disable()
    },
  }
}

/** A fresh SDK, as {@link telemetry} makes it. */
export type Telemetry = ReturnType<typeof telemetry>

/** The test's SDK, `echostore/otel` installed on it, and the application's tracer `app`. */
export interface Instrumented {
  readonly sdk: Telemetry
  /** A test may install again (other options, another provider): the one assigned is uninstalled after it. */
  installed: Instrumentation
  readonly tracer: Tracer
  /** Runs `work` as a request of the application: inside a new active span named `name`. */
  request<T>(name: string, work: () => Promise<T>): Promise<T>
}

/**
 * For every test of the calling file: before it, a fresh SDK with `echostore/otel` installed on it;
 * after it, the instrumentation uninstalled and the SDK shut down. The object answered is the running
 * test's (its fields change from test to test).
 */
export function instrumentEachTest(): Instrumented {
  let sdk: Telemetry | undefined
  let installed: Instrumentation | undefined
  let tracer: Tracer | undefined
  const now = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('instrumentEachTest: read outside a test')
    return value
  }
  beforeEach(() => {
    sdk = telemetry()
    installed = instrument({ tracerProvider: sdk.tracerProvider, meterProvider: sdk.meterProvider })
    tracer = sdk.tracerProvider.getTracer('app')
  })
  afterEach(async () => {
    installed?.uninstall()
    await sdk?.shutdown()
    sdk = installed = tracer = undefined
  })
  return {
    get sdk() {
      return now(sdk)
    },
    get installed() {
      return now(installed)
    },
    set installed(again: Instrumentation) {
      installed = again
    },
    get tracer() {
      return now(tracer)
    },
    request: (name, work) => request(now(tracer), name, work),
  }
}

/** Runs `work` inside a new active span of `tracer` named `name`, ending it when `work` settles: a request of the application. */
export function request<T>(tracer: Tracer, name: string, work: () => Promise<T>): Promise<T> {
  return tracer.startActiveSpan(name, (span) => work().finally(() => span.end()))
}

/** The spans of `spans` named `name`. */
export const named = (spans: ReadableSpan[], name: string): ReadableSpan[] => spans.filter((s) => s.name === name)
/** The span of `spans` whose span id is `id`. */
export const byId = (spans: ReadableSpan[], id: string | undefined): ReadableSpan | undefined => spans.find((s) => s.spanContext().spanId === id)
/** The span id of `span`'s parent, if it has one. */
export const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId
