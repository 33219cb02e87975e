import { FLOOR_SITS_OUT, FloorRows } from './floor-rows.js'
import { readThrough } from './read-through.js'
import type { CacheInstance, CacheOptions, Contender } from './types.js'

/**
 * Floor 1: a raw `Map` with an expiry check. A hit is a lookup and a `Date.now()`; a miss calls
 * the loader every time (no single-flight), so its herd figures show what coalescing saves.
 */
export const mapFloor: Contender = {
  name: 'floor:map',
  kind: 'floor',
  sitsOut: FLOOR_SITS_OUT,
  setup: 'Map<id, {row, expires}>, Date.now() per read, FIFO eviction when full, no coalescing',
  purgeMethod: 'one for-of pass deleting expired entries',
  create({ ttl, capacity, loader }: CacheOptions): CacheInstance {
    const rows = new FloorRows(ttl, capacity)
    return {
      fetch: readThrough(rows, loader),
      async close() {},
      size: () => rows.size,
      purge: () => rows.purge(),
      async prefill(ids, row) {
        for (const id of ids) rows.set(id, row)
      },
    }
  },
}
