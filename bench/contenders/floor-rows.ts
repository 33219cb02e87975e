import type { Contender, Row } from './types.js'

/** The workload both floors sit out: W9 compares eviction policies, and theirs is FIFO. */
export const FLOOR_SITS_OUT: Contender['sitsOut'] = { workloads: ['W9'], why: "W9 weighs the peers' eviction policies; a floor evicts FIFO, over 10 s a trace" }

interface Entry {
  row: Row
  expires: number
}

/**
 * The rows both floors keep: a `Map` from id to row and expiry, checked with `Date.now()` on each
 * read; when full, a new id evicts the oldest insertion (the cheapest bound a `Map` offers).
 */
export class FloorRows {
  private readonly map = new Map<string, Entry>()

  constructor(
    private readonly ttl: number,
    private readonly capacity: number,
  ) {}

  /** The live row for `id`, or undefined when absent or expired. */
  get(id: string): Row | undefined {
    const entry = this.map.get(id)
    return entry !== undefined && entry.expires > Date.now() ? entry.row : undefined
  }

  /** Writes `row` with a fresh expiry. */
  set(id: string, row: Row): void {
    const expires = Date.now() + this.ttl
    const entry = this.map.get(id)
    if (entry !== undefined) {
      entry.row = row
      entry.expires = expires
      return
    }
    if (this.map.size >= this.capacity) {
      const oldest = this.map.keys().next()
      if (oldest.done !== true) this.map.delete(oldest.value)
    }
    this.map.set(id, { row, expires })
  }

  /** Drops the row of `id`, if any. */
  delete(id: string): void {
    this.map.delete(id)
  }

  /** Rows held, expired ones included. */
  get size(): number {
    return this.map.size
  }

  /** One full pass deleting every expired row. */
  purge(): void {
    const now = Date.now()
    for (const [id, entry] of this.map) if (entry.expires <= now) this.map.delete(id)
  }
}
