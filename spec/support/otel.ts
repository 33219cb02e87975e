/**
 * The OpenTelemetry SDK in memory, for specs: a tracer provider whose spans go to an
 * in-memory exporter, a meter provider read on demand into an in-memory metric exporter, and the
 * async-hooks context manager (so a span started in a request is the parent of what the request does).
 */
import { type Tracer, context } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics'
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
  return {
    tracerProvider,
    meterProvider,
    /** Every span ended so far. */
    async spans(): Promise<ReadableSpan[]> {
      await tracerProvider.forceFlush()
      return spanExporter.getFinishedSpans()
    },
    /** The data points of the metric `name` now (empty when it has none). */
    async points(name: string): Promise<Point[]> {
      metricExporter.reset()
      await reader.forceFlush()
      const metrics = metricExporter.getMetrics().flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics))
      return metrics.filter((m) => m.descriptor.name === name).flatMap((m) => m.dataPoints.map((p) => ({ attributes: { ...p.attributes }, value: p.value as Point['value'] })))
    },
    async shutdown(): Promise<void> {
      await Promise.all([tracerProvider.shutdown(), meterProvider.shutdown()])
      context.disable()
    },
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
