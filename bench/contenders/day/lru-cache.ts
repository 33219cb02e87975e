import { LRUCache } from 'lru-cache'
import type { DayCache, DayContender, DaySetup, StockRow } from './types.js'

/** lru-cache 11 with `fetchMethod` and its stale options: stale-while-revalidate, and the stale row kept and served when a refresh rejects. */
export const lruCacheDay: DayContender = {
  name: 'lru-cache',
  setup: () =>
    'new LRUCache({ max, ttl, fetchMethod, allowStale: true, noDeleteOnFetchRejection: true, allowStaleOnFetchRejection: true }) (stale-while-revalidate; on a failed refresh the stale row stays and answers); fetch(id); delete(id); memory only in both shapes (no L2, no bus)',
  async create(s: DaySetup): Promise<DayCache> {
    const cache = new LRUCache<string, StockRow>({
      max: s.capacity,
      ttl: s.ttl,
      allowStale: true,
      noDeleteOnFetchRejection: true,
      allowStaleOnFetchRejection: true,
      fetchMethod: (id) => s.load(id),
    })
    return {
      read: (id) => cache.fetch(id),
      invalidate: async (id) => cache.delete(id),
      async close() {
        cache.clear()
      },
    }
  },
}
