import { cachified, createBatch, totalTtl, type Cache, type CacheEntry } from '@epic-web/cachified'
import { LRUCache } from 'lru-cache'
import type { Row } from '../types.js'
import type { PageContender, PageReader, PageReaderOptions } from './types.js'

/**
 * cachified's `createBatch` over its README's lru-cache adapter: per page, one batch, and each id read
 * with `cachified({ key, cache, ttl, getFreshValue: batch.add(id) })`; the ids no page has in cache
 * or in flight go to the origin as one call per page (cachified joins a read of a key already being
 * fetched, from any page).
 */
export const cachifiedBatch: PageContender = {
  name: 'cachified createBatch',
  kind: 'peer',
  pkgs: ['@epic-web/cachified', 'lru-cache'],
  setup:
    "new LRUCache({ max: capacity }) as its README's adapter (entry ttl = totalTtl(metadata)); per page, createBatch((ids) => origin(ids)), cachified({ key: id, cache, ttl, getFreshValue: batch.add(id) })",
  create({ ttl, capacity, origin }: PageReaderOptions): PageReader {
    const lru = new LRUCache<string, CacheEntry>({ max: capacity })
    const cache: Cache = {
      set: (key, value) => void lru.set(key, value, { ttl: totalTtl(value.metadata), start: value.metadata.createdTime }),
      get: (key) => lru.get(key),
      delete: (key) => void lru.delete(key),
    }
    return {
      read(ids) {
        const batch = createBatch<Row, string>((misses) => origin(misses))
        return Promise.all(ids.map((id) => cachified<Row>({ key: id, cache, ttl, getFreshValue: batch.add(id) })))
      },
      async close() {
        lru.clear()
      },
    }
  },
}
