import { SieveCache } from '@neophi/sieve-cache'
import { WORKLOADS } from '../lib/config.js'
import { readThrough } from './read-through.js'
import type { CacheInstance, CacheOptions, Contender, Row } from './types.js'

/**
 * @neophi/sieve-cache 1, a SIEVE cache behind a `Map` interface: no loader and no expiry, so the
 * adapter reads through it (`get`, on a miss the loader then `set`) without coalescing concurrent
 * misses. It runs in W9 only, whose rows never expire and whose requests come one at a time.
 */
export const sieveCache: Contender = {
  name: 'sieve-cache',
  kind: 'peer',
  pkg: '@neophi/sieve-cache',
  sitsOut: { workloads: WORKLOADS.filter((w) => w !== 'W9'), why: 'W9 only: a hit-rate peer (SIEVE) with no expiry' },
  setup: 'new SieveCache(capacity); get(id), on a miss the loader then set(id, row)',
  create({ capacity, loader }: CacheOptions): CacheInstance {
    const cache = new SieveCache<string, Row>(capacity)
    return {
      fetch: readThrough(cache, loader),
      async close() {
        cache.clear()
      },
      size: () => cache.size,
    }
  },
}
