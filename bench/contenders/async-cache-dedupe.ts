import { createCache } from 'async-cache-dedupe'
import type { CacheInstance, CacheOptions, Contender, Row } from './types.js'

/**
 * async-cache-dedupe 3 with its memory storage: `define('fetch', fn)` dedupes and caches. Its
 * ttl is whole seconds, so a ttl under 1 s becomes 1 s (and rows expire on second boundaries).
 */
export const asyncCacheDedupe: Contender = {
  name: 'async-cache-dedupe',
  kind: 'peer',
  sitsOut: { workloads: ['W9'], why: "an LRU (mnemonist's) would repeat lru-cache's W9 hit rates" },
  pkg: 'async-cache-dedupe',
  ttlResolutionMs: 1000,
  setup: "createCache({ ttl: ceil(ttl / 1 s), storage: { type: 'memory', options: { size: capacity } } }).define('fetch', fn)",
  create({ ttl, capacity, loader }: CacheOptions): CacheInstance {
    const cache = createCache({
      ttl: Math.max(1, Math.ceil(ttl / 1000)),
      storage: { type: 'memory', options: { size: capacity } },
    }).define('fetch', (id: string): Promise<Row> => Promise.resolve(loader(id)))
    return {
      fetch: (id) => cache.fetch(id),
      async close() {
        await cache.clear()
      },
    }
  },
}
