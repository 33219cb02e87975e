import { createCache } from 'async-cache-dedupe'
import { Redis } from 'ioredis'
import type { DayCache, DayContender, DaySetup, StockRow } from './types.js'

/** async-cache-dedupe 3: `define` dedupes and caches; `stale` serves a row past its ttl while it is revalidated. Its ttl and stale are whole seconds. */
export const asyncCacheDedupeDay: DayContender = {
  name: 'async-cache-dedupe',
  setup: (shared) =>
    `createCache({ ttl: ceil(ttl / 1 s), stale: 10 × that (serve past the ttl while revalidating), storage }).define('fetch', fn); clear('fetch', id); storage: ` +
    (shared ? "{ type: 'redis', options: { client } } (its Redis storage; no memory layer in front, no bus)" : "{ type: 'memory', options: { size } }"),
  async create(s: DaySetup): Promise<DayCache> {
    const client = s.redis !== undefined ? new Redis(s.redis.url) : undefined
    const ttl = Math.max(1, Math.ceil(s.ttl / 1000))
    const cache = createCache({
      ttl,
      stale: Math.max(1, Math.round(s.grace / 1000)),
      storage: client !== undefined ? { type: 'redis', options: { client } } : { type: 'memory', options: { size: s.capacity } },
    }).define('fetch', (id: string): Promise<StockRow> => s.load(id))
    return {
      read: (id) => cache.fetch(id),
      invalidate: (id) => cache.clear('fetch', id),
      async close() {
        client?.disconnect()
      },
    }
  },
}
