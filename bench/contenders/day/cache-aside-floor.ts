import { FloorRows } from '../floor-rows.js'
import type { DayCache, DayContender, DaySetup, StockRow } from './types.js'

/** The naive cache-aside floor (the bench's `floor:map`): get, else load and set; delete on update. No coalescing, no stale serving, no timeout. */
export const cacheAsideFloorDay: DayContender = {
  name: 'floor:map',
  setup: () => 'naive cache-aside: Map get, else load then set (ttl); delete on update; no coalescing, no stale serving, no timeout; memory only in both shapes',
  async create(s: DaySetup): Promise<DayCache> {
    const rows = new FloorRows(s.ttl, s.capacity)
    return {
      async read(id) {
        const row = rows.get(id) as StockRow | undefined
        if (row !== undefined) return row
        const loaded = await s.load(id)
        rows.set(id, loaded)
        return loaded
      },
      invalidate: async (id) => rows.delete(id),
      async close() {},
    }
  },
}
