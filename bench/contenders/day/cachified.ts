import { cachified, totalTtl, type Cache, type CacheEntry } from '@epic-web/cachified'
import { redisCacheAdapter } from 'cachified-redis-adapter'
import { LRUCache } from 'lru-cache'
import { createClient } from 'redis'
import type { DayCache, DayContender, DaySetup, StockRow } from './types.js'

/** cachified's README adapter for lru-cache: each entry lives its ttl plus its stale-while-revalidate window. */
function lruAdapter(max: number): Cache {
  const lru = new LRUCache<string, CacheEntry>({ max })
  return {
    set: (key, value) => {
      const ttl = totalTtl(value?.metadata)
      lru.set(key, value, { ttl: ttl === Infinity ? undefined : ttl, start: value?.metadata?.createdTime })
    },
    get: (key) => lru.get(key),
    delete: (key) => lru.delete(key),
  }
}

/** @epic-web/cachified 5: `staleWhileRevalidate` (its only stale option outside `forceFresh`); a memory lru-cache alone, or cachified-redis-adapter over Redis. */
export const cachifiedDay: DayContender = {
  name: 'cachified',
  setup: (shared) =>
    'cachified({ key, cache, ttl, staleWhileRevalidate: 10 × ttl, getFreshValue }) (fallbackToCache applies only with forceFresh; no timeout option); cache.delete(id) to invalidate; cache: ' +
    (shared
      ? 'redisCacheAdapter(createClient({ url })) (cachified-redis-adapter, the adapter its README lists for Redis; no memory layer in front, no bus)'
      : "its README's lru-cache adapter (ttl = totalTtl(metadata))"),
  async create(s: DaySetup): Promise<DayCache> {
    const client = s.redis !== undefined ? createClient({ url: s.redis.url }) : undefined
    if (client !== undefined) {
      client.on('error', () => {})
      await client.connect()
    }
    const prefix = s.redis !== undefined ? `${s.redis.prefix}cf:` : ''
    const cache: Cache = client !== undefined ? redisCacheAdapter(client) : lruAdapter(s.capacity)
    return {
      read: (id) => cachified<StockRow>({ key: prefix + id, cache, ttl: s.ttl, staleWhileRevalidate: s.grace, getFreshValue: () => s.load(id) }),
      invalidate: async (id) => cache.delete(prefix + id),
      async close() {
        if (client !== undefined) await client.quit()
      },
    }
  },
}
