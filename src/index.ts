/**
 * EchoStore: a read-through cache that survives a thundering herd by construction.
 * The core surface (`echostore`): tables, errors, clocks, the in-process L2 and bus, and the
 * contracts for bringing your own. Redis, Prometheus and test aids have entries of their own
 * (`echostore/redis`, `echostore/prometheus`, `echostore/testing`); see README.md for the contract.
 */
export { createTable, Table, type FetchOptions } from './table/table.js'
export { type TableOptions, type LeaseOptions, MAX_TTL, MAX_CAPACITY } from './table/options.js'
export type { Loader, LoaderContext } from './owner/loader.js'
export type { OwnerInspector, OwnerInspectionEvent } from './owner/inspector.js'
export type { Stats, CounterName } from './core/counters.js'
export { COUNTER_NAMES } from './core/counters.js'
export type { TableEvents } from './core/events.js'
export { type Id, MAX_ID_LENGTH } from './core/id.js'
export { MAX_VERSION } from './core/versions.js'
export { manualClock, systemClock, type Clock, type ManualClock, type TimerHandle } from './core/clock.js'
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
  MissingPeerDependencyError,
} from './core/errors.js'
export { type ChangeOptions, type ChangeResult, type ClearResult } from './table/changes.js'
export { PUBLISH_TIMEOUT } from './bus/publish.js'

// L2: the contract, the in-process store and the codecs (Redis: `echostore/redis`).
export { type L2Store, type L2Entry, type L2Write, type L2Kind, type L2Leases, DEFAULT_L2_TIMEOUT } from './l2/store.js'
export { BREAKER_FAILURES, BREAKER_COOLDOWN, L2TimeoutError } from './l2/facade.js'
export { memoryL2, type MemoryL2, type MemoryL2Options } from './l2/memory.js'
export { jsonCodec, v8Codec, type Codec } from './l2/codec.js'

// Coherence: the bus contract, the wire format any transport speaks, and the in-process bus (Redis: `echostore/redis`).
export type { Bus, BusDelivery, CoherenceMessage, ChangeMessage, ClearMessage, FillMessage } from './bus/bus.js'
export { parseCoherenceMessage, encodeWire, decodeWire, MAX_WIRE_BYTES } from './bus/message.js'
export { localBus, type LocalBusOptions } from './bus/local.js'
