/**
 * EchoStore: a read-through cache that survives a thundering herd by construction.
 * The public surface only; see README.md for the contract.
 */
export { createTable, Table, type FetchOptions } from './table.js'
export type { TableOptions } from './options.js'
export type { Loader, LoaderContext } from './owner/flight.js'
export type { Stats, CounterName } from './counters.js'
export { COUNTER_NAMES } from './counters.js'
export type { TableEvents } from './table-events.js'
export type { Id } from './id.js'
export { manualClock, systemClock, type Clock, type ManualClock, type TimerHandle } from './clock.js'
export { EchoStoreError, TableClosedError, FetchTimeoutError, LoadTimeoutError } from './errors.js'
