/**
 * `echostore/prometheus`: a table's counters as Prometheus metrics, through the caller's own
 * prom-client (an optional peer dependency that this entry never imports).
 * @module echostore/prometheus
 */
export {
  registerTableMetrics,
  type PromClient,
  type PromRegistry,
  type PromMetricConfig,
  type MetricsSource,
  type TableMetricsOptions,
} from './metrics/prometheus.js'
