/**
 * `echostore/otel`: OpenTelemetry spans and metrics for EchoStore tables. Importing this entry loads
 * `@opentelemetry/api`, an optional peer dependency (`npm install @opentelemetry/api@1`); no other
 * entry does.
 * @module echostore/otel
 */
export { instrument, SCOPE, type InstrumentOptions, type Instrumentation } from './otel/instrument.js'
export { METRIC_NAMES } from './otel/metrics.js'
