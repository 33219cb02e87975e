/**
 * `instrument()`: OpenTelemetry spans and metrics for every table in the process, made from
 * EchoStore's `diagnostics_channel` channels (so a table needs no option, and nothing is built
 * before `instrument()` is called or after `uninstall()`).
 */
import type * as Api from '@opentelemetry/api'
import { badArgument, describe } from '../core/errors.js'
import { readOptions } from '../table/read-options.js'
import { otel } from './api.js'
import { subscribeMetrics } from './metrics.js'
import { subscribeSpans } from './spans.js'
import type { Subscription } from './subscription.js'

/** Options of {@link instrument}. */
export interface InstrumentOptions {
  /** Where spans go. Default: the global tracer provider (`trace.getTracerProvider()`). */
  tracerProvider?: Api.TracerProvider
  /** Where metrics go. Default: the global meter provider (`metrics.getMeterProvider()`). */
  meterProvider?: Api.MeterProvider
  /** Puts the ids read (`echostore.id`, `echostore.ids`) on spans. Default `false`; ids never go on metrics. */
  recordIds?: boolean
}

/** What {@link instrument} returns. */
export interface Instrumentation {
  /** Removes every subscriber `instrument` added: no span or metric is made afterwards. Idempotent. */
  uninstall(): void
}

/** The instrumentation scope EchoStore's tracer and meter are named by. */
export const SCOPE = 'echostore'

const OPTIONS = ['tracerProvider', 'meterProvider', 'recordIds'] as const satisfies readonly (keyof InstrumentOptions)[]

/**
 * Starts making spans and metrics for every EchoStore table in this process: a span per fetch not
 * answered by a row (the one that started a flight holds its loader and L2 spans and counts the
 * callers it answered; one that joined links to it), loader and L2 spans (Redis ones with the
 * `db.*` attributes), fetch outcomes, stale answers, load and L2 durations, lease outcomes. Spans are
 * children of the caller's active span. Bad options throw a `TypeError` naming the option.
 */
export function instrument(options: InstrumentOptions = {}): Instrumentation {
  const read = readOptions(options, OPTIONS, 'instrument')
  const tracerProvider = (read.tracerProvider ?? otel.trace.getTracerProvider()) as Api.TracerProvider
  const meterProvider = (read.meterProvider ?? otel.metrics.getMeterProvider()) as Api.MeterProvider
  if (typeof tracerProvider?.getTracer !== 'function') {
    throw badArgument(TypeError, `instrument: option "tracerProvider" must be an OpenTelemetry TracerProvider, got ${describe(read.tracerProvider)}`)
  }
  if (typeof meterProvider?.getMeter !== 'function') {
    throw badArgument(TypeError, `instrument: option "meterProvider" must be an OpenTelemetry MeterProvider, got ${describe(read.meterProvider)}`)
  }
  if (read.recordIds !== undefined && typeof read.recordIds !== 'boolean') {
    throw badArgument(TypeError, `instrument: option "recordIds" must be a boolean, got ${describe(read.recordIds)}`)
  }
  // What goes wrong in a handler (a provider that throws) is OpenTelemetry's to report, never the table's.
  const onError = (error: unknown): void => otel.diag.error('echostore/otel: a span or metric could not be recorded', error)
  const subscriptions: Subscription[] = [subscribeSpans(otel, tracerProvider.getTracer(SCOPE), read.recordIds === true, onError), subscribeMetrics(meterProvider.getMeter(SCOPE), onError)]
  return {
    uninstall() {
      for (const subscription of subscriptions.splice(0)) subscription.unsubscribe()
    },
  }
}
