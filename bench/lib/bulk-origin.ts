import type { Row } from '../contenders/types.js'
import { ROW } from './row.js'

/** What one origin call costs: a fixed part and a part per id, in ms. */
export interface BulkCost {
  perCallMs: number
  perIdMs: number
}

/** A bulk origin (SQL `WHERE id IN`, a bulk endpoint): answers many ids in one call, and counts its calls and the ids asked. */
export interface BulkOrigin {
  /** One call: resolves, after the call's cost on a real timer, to one row per id, in the order of `ids`. */
  load(ids: readonly string[]): Promise<Row[]>
  /** Calls made since the last `reset`. Written by `load` alone. */
  readonly calls: number
  /** Ids asked in those calls. Written by `load` alone. */
  readonly ids: number
  /** The most ids one call asked for since the last `reset`. Written by `load` alone. */
  readonly largest: number
  /** Zeroes the counts. */
  reset(): void
}

/**
 * A bulk origin whose call takes `perCallMs + perIdMs × ids` on a real timer: the origin's own
 * time, spent outside this process, so the caller's CPU is free meanwhile. Node's timers fire on
 * whole milliseconds, so a call takes its cost rounded up to the next millisecond (or later, when
 * the event loop is busy).
 */
export function bulkOrigin(cost: BulkCost): BulkOrigin {
  let calls = 0
  let asked = 0
  let largest = 0
  return {
    load(ids) {
      calls++
      asked += ids.length
      if (ids.length > largest) largest = ids.length
      const rows = new Array<Row>(ids.length).fill(ROW)
      return new Promise((resolve) => setTimeout(resolve, cost.perCallMs + cost.perIdMs * ids.length, rows))
    },
    get calls() {
      return calls
    },
    get ids() {
      return asked
    },
    get largest() {
      return largest
    },
    reset() {
      calls = 0
      asked = 0
      largest = 0
    },
  }
}
