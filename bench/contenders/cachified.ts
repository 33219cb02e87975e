import { cachified, totalTtl, type CacheEntry } from '@epic-web/cachified'
import { LRUCache } from 'lru-cache'
import { WORKLOADS } from '../lib/config.js'
import type { CacheInstance, CacheOptions, Contender, Row } from './types.js'

/**
 * @epic-web/cachified 5 over its README's lru-cache adapter (each entry lives `totalTtl`). It runs in
 * W12 only, set up there by bench/contenders/day/cachified.ts; this entry names it for the report,
 * BENCH_ONLY and BENCH_SKIP.
 */
export const cachifiedContender: Contender = {
  name: 'cachified',
  kind: 'peer',
  pkg: '@epic-web/cachified',
  sitsOut: { workloads: WORKLOADS.filter((w) => w !== 'W12'), why: "W12 only: a service's day with its stale-while-revalidate" },
  setup: 'cachified({ key, cache: lru-cache adapter, ttl, getFreshValue }) (W12: see its set-up table)',
  create({ ttl, capacity, loader }: CacheOptions): CacheInstance {
    const lru = new LRUCache<string, CacheEntry>({ max: capacity })
    const cache = {
      set: (key: string, value: CacheEntry) => void lru.set(key, value, { ttl: totalTtl(value.metadata), start: value.metadata.createdTime }),
      get: (key: string) => lru.get(key),
      delete: (key: string) => void lru.delete(key),
    }
    return {
      fetch: (id) => cachified<Row>({ key: id, cache, ttl, getFreshValue: () => Promise.resolve(loader(id)) }),
      async close() {
        lru.clear()
      },
      size: () => lru.size,
    }
  },
}
