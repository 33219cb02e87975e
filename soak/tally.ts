import type { Id, Table } from '../src/index.js'
import type { Row } from './origin.js'
import { type Problems, show } from './problems.js'

/** The rule an `error` event without an id breaks: the owner's handlers never throw. */
export const INTERNAL_FAULT = 'the owner caught no fault in its own handlers'

/**
 * What the soak itself saw happen on one table: the figures its counters are held against at the
 * end. Written by the workload and the bad-input catalog as calls go out and settle, and by the
 * table's event listeners.
 */
export class Tally {
  /** Fetches that reached the lookup: valid arguments, table open, signal not already aborted. */
  lookups = 0
  /** Calls of this table's loaders: the origin work it asked for. */
  loaderCalls = 0
  /** Callers rejected with `FetchTimeoutError`. */
  timedOut = 0
  /** Callers rejected with their own signal's reason (already-aborted signals included). */
  cancelled = 0
  /** Flights that ended with an answer (`fill` events, stored or not). */
  completed = 0
  /** Of those, flights answered by L2. */
  completedFromL2 = 0

  /** Starts counting `table`'s events; a fault the owner caught in its own handlers (an `error` event without an id) goes to `problems`. */
  listen(table: Table<Row | undefined, Id>, problems: Problems): void {
    table.events.on('fill', (event) => {
      this.completed++
      if (event.source === 'l2') this.completedFromL2++
    })
    table.events.on('error', (event) => {
      if (event.id === undefined) problems.add(INTERNAL_FAULT, show(event.error))
    })
  }
}
