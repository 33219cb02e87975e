/**
 * EchoStore: a read-through cache that survives a thundering herd by construction.
 * The public surface only; see README.md for the contract.
 */
export { createTable, Table, type FetchOptions } from './table.js'
export { type TableOptions, MAX_TTL, MAX_CAPACITY } from './options.js'
export type { Loader, LoaderContext } from './owner/loader.js'
export type { OwnerInspector } from './owner/owner.js'
export type { Stats, CounterName } from './counters.js'
export { COUNTER_NAMES } from './counters.js'
export type { TableEvents } from './table-events.js'
export { type Id, MAX_ID_LENGTH } from './id.js'
export { MAX_VERSION } from './versions.js'
export { manualClock, systemClock, type Clock, type ManualClock, type TimerHandle } from './clock.js'
export {
  EchoStoreError,
  TableError,
  TableClosedError,
  FetchTimeoutError,
  LoadTimeoutError,
  L2CorruptEntryError,
  L2ClosedError,
  BusClosedError,
  L2UnfitValueError,
  SelfFetchError,
} from './errors.js'
export { type ChangeOptions, type ChangeResult, type ClearResult, PUBLISH_TIMEOUT } from './changes.js'

// L2: the contract, the adapters, and the fault injector for tests.
export { type L2Store, type L2Entry, type L2Write, type L2Kind, DEFAULT_L2_TIMEOUT } from './l2/store.js'
export { BREAKER_FAILURES, BREAKER_COOLDOWN, L2TimeoutError } from './l2/facade.js'
export { memoryL2, type MemoryL2, type MemoryL2Options } from './l2/memory.js'
export { redisL2, DEFAULT_MAX_VALUE_BYTES, type RedisL2Options, type RedisL2Client } from './l2/redis.js'
export { jsonCodec, v8Codec, type Codec } from './l2/codec.js'
export { chaosL2, ChaosError, type ChaosL2, type ChaosFault, type ChaosOp } from './l2/chaos.js'

// Coherence: the bus contract, the message format, and the two transports.
export type { Bus, BusDelivery, CoherenceMessage, ChangeMessage, ClearMessage } from './bus/bus.js'
export { parseCoherenceMessage, encodeWire, decodeWire, MAX_WIRE_BYTES } from './bus/message.js'
export { localBus, type LocalBusOptions } from './bus/local.js'
export { redisBus, DEFAULT_CHANNEL, type RedisBus, type RedisBusOptions } from './bus/redis.js'

// Metrics: the counters as Prometheus metrics through the caller's own prom-client (optional peer).
export {
  registerTableMetrics,
  type PromClient,
  type PromRegistry,
  type PromMetricConfig,
  type MetricsSource,
  type TableMetricsOptions,
} from './metrics/prometheus.js'
