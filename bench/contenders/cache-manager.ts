import { createCache } from 'cache-manager'
import { createKeyv, type KeyvCacheableMemory } from 'cacheable'
import type { CacheInstance, CacheOptions, Contender } from './types.js'

/**
 * cache-manager 7 over cacheable's LRU memory store (`createKeyv`: Keyv + `KeyvCacheableMemory`),
 * read with `wrap` (coalesces concurrent misses). `useClone: false` returns rows by reference,
 * as the other contenders do (its default `structuredClone`s every hit).
 */
export const cacheManager: Contender = {
  name: 'cache-manager',
  kind: 'peer',
  sitsOut: { workloads: ['W9'], why: "an LRU (cacheable's) would repeat lru-cache's W9 hit rates, at 13–30 s a trace" },
  pkg: 'cache-manager',
  setup: "createCache({ ttl, stores: [createKeyv({ ttl, lruSize: capacity, useClone: false })] }) (cacheable's KeyvCacheableMemory); wrap(id, fn)",
  purgeMethod: "CacheableMemory.checkExpiration() (what cacheable's checkInterval runs)",
  create({ ttl, capacity, loader }: CacheOptions): CacheInstance {
    const keyv = createKeyv({ ttl, lruSize: capacity, useClone: false })
    const memory = (keyv.store as KeyvCacheableMemory).store
    const cache = createCache({ ttl, stores: [keyv] })
    return {
      fetch: (id) => cache.wrap(id, () => loader(id)),
      async close() {
        await cache.disconnect()
      },
      size: () => memory.size,
      purge() {
        memory.checkExpiration()
      },
      async prefill(ids, row) {
        for (const id of ids) memory.set(id, row, ttl)
      },
    }
  },
}
