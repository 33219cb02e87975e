/**
 * EchoStore: a read-through cache that survives a thundering herd by construction.
 * `echostore` is what an application uses: tables, their options and results, errors, the
 * in-process L2 store and bus, and the clock. Other entries: `echostore/redis` (Redis L2 and bus),
 * `echostore/prometheus` (metrics), `echostore/testing` (fakes and fault injection),
 * `echostore/store` (the contracts and wire format for writing an L2 store or a bus) and
 * `echostore/limits` (the bounds and tuning constants).
 * @module echostore
 */
export { createTable, Table, type FetchOptions } from './table/table.js'
export type { TableOptions, LeaseOptions } from './table/options.js'
export type { ChangeOptions, PutOptions, ChangeResult, ClearResult } from './table/changes.js'
export type { Loader, LoaderContext, BatchLoader, BatchLoaderContext, BatchAnswer, LoaderMayAnswerUndefined, ExplainsUndefined, Absent } from './core/loader.js'
export type { OwnerInspector, OwnerInspectionEvent } from './owner/inspector.js'
export { COUNTER_NAMES, type Stats, type CounterName } from './core/counters.js'
export type { TableEvents } from './core/events.js'
export type { Id } from './core/id.js'
export { systemClock, type Clock, type TimerHandle } from './core/clock.js'
export {
  EchoStoreError,
  TableError,
  TableClosedError,
  type ClosedCall,
  FetchTimeoutError,
  LoadTimeoutError,
  LeaseHolderFailedError,
  SelfFetchError,
  L2TimeoutError,
  L2CorruptEntryError,
  L2UnfitValueError,
  L2ClosedError,
  BusClosedError,
  RedisUnreachableError,
  MissingPeerDependencyError,
  ChaosError,
} from './core/errors.js'
export { memoryL2, type MemoryL2, type MemoryL2Options } from './l2/memory.js'
export { localBus, type LocalBus, type LocalBusOptions } from './bus/local.js'
export type { FetchChannelContext, FetchOutcome, LoadChannelContext, L2ChannelContext, L2Op, BusChannelMessage, BusEventType } from './core/channels.js'
