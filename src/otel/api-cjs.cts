/**
 * The CommonJS build's `api.ts` (tshy builds this file in its place): the same module, loaded
 * through CommonJS's own `require`.
 */
import loading = require('./require-api.js')

export = {
  /** The `@opentelemetry/api` module, resolved from where EchoStore is installed. */
  otel: loading.requireOtelApi(require),
}
