import { BentoCache, bentostore } from 'bentocache'
import { memoryDriver } from 'bentocache/drivers/memory'
import type { CacheInstance, CacheOptions, Contender } from './types.js'

/**
 * bentocache 1.x: one memory (L1) store, `getOrSet`. `serialize: false` keeps rows as objects,
 * as the other contenders do (its default would JSON-encode every row).
 */
export const bentocache: Contender = {
  name: 'bentocache',
  kind: 'peer',
  sitsOut: { workloads: ['W9'], why: "an LRU (lru-cache's, inside) would repeat lru-cache's W9 hit rates, at 20–40 s a trace" },
  pkg: 'bentocache',
  setup: 'BentoCache({ ttl, stores: { memory: bentostore().useL1Layer(memoryDriver({ maxItems: capacity, serialize: false })) } }); getOrSet({ key, factory })',
  create({ ttl, capacity, loader }: CacheOptions): CacheInstance {
    const bento = new BentoCache({
      default: 'memory',
      ttl,
      stores: { memory: bentostore().useL1Layer(memoryDriver({ maxItems: capacity, serialize: false })) },
    })
    return {
      fetch: (id) => bento.getOrSet({ key: id, factory: () => loader(id) }),
      close: () => bento.disconnectAll(),
    }
  },
}
