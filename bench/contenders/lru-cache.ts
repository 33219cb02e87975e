import { LRUCache } from 'lru-cache'
import type { CacheInstance, CacheOptions, Contender, Row } from './types.js'

/** lru-cache 11: `fetch` with a `fetchMethod` (coalesces concurrent misses; no sweeper). */
export const lruCache: Contender = {
  name: 'lru-cache',
  kind: 'peer',
  pkg: 'lru-cache',
  setup: 'new LRUCache({ max: capacity, ttl, fetchMethod }); cache.fetch(id)',
  purgeMethod: 'purgeStale()',
  create({ ttl, capacity, loader }: CacheOptions): CacheInstance {
    const cache = new LRUCache<string, Row>({ max: capacity, ttl, fetchMethod: (id) => loader(id) })
    return {
      fetch: (id) => cache.fetch(id),
      async close() {
        cache.clear()
      },
      size: () => cache.size,
      purge() {
        cache.purgeStale()
      },
      async prefill(ids, row) {
        for (const id of ids) cache.set(id, row)
      },
    }
  },
}
