import { FLOOR_SITS_OUT, FloorRows } from './floor-rows.js'
import type { CacheInstance, CacheOptions, Contender, Row } from './types.js'

/**
 * Floor 2: the minimal promise-map single-flight. The Map floor's rows, plus a `Map` from id to
 * the in-flight promise: concurrent misses on one id share that promise, and it leaves the map
 * when it settles.
 */
export const singleFlightFloor: Contender = {
  name: 'floor:single-flight',
  kind: 'floor',
  sitsOut: FLOOR_SITS_OUT,
  setup: 'Map floor rows + Map<id, Promise> of in-flight loads',
  create({ ttl, capacity, loader }: CacheOptions): CacheInstance {
    const rows = new FloorRows(ttl, capacity)
    const inflight = new Map<string, Promise<Row>>()
    async function load(id: string) {
      try {
        const row = await loader(id)
        rows.set(id, row)
        return row
      } finally {
        inflight.delete(id)
      }
    }
    return {
      fetch(id) {
        const row = rows.get(id)
        if (row !== undefined) return Promise.resolve(row)
        let flight = inflight.get(id)
        if (flight === undefined) {
          flight = load(id)
          inflight.set(id, flight)
        }
        return flight
      },
      async close() {},
      size: () => rows.size,
    }
  },
}
