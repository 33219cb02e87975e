import { newCache } from 'transitory'
import { WORKLOADS } from '../lib/config.js'
import type { CacheInstance, CacheOptions, Contender, Row } from './types.js'

/**
 * transitory 2, a W-TinyLFU cache: `newCache().maxSize(capacity).withLoader(fn).build()`, read
 * with `get` (coalesces concurrent misses). It evicts in batches, letting the cache run up to 1 %
 * over `maxSize` between them, so the adapter calls its public `cleanUp()` whenever a fetch left
 * it over capacity: it never holds more rows than the others. No expiry layer: it runs in W9 only,
 * whose rows never expire.
 */
export const transitory: Contender = {
  name: 'transitory',
  kind: 'peer',
  pkg: 'transitory',
  sitsOut: { workloads: WORKLOADS.filter((w) => w !== 'W9'), why: 'W9 only: a hit-rate peer (W-TinyLFU), set up without expiry' },
  setup: 'newCache().maxSize(capacity).withLoader(fn).build(); cache.get(id), then cleanUp() when size > capacity',
  create({ capacity, loader }: CacheOptions): CacheInstance {
    const cache = newCache<string, Row>()
      .maxSize(capacity)
      .withLoader((id) => loader(id))
      .build()
    const trim = (row: Row): Row => {
      if (cache.size > capacity) cache.cleanUp()
      return row
    }
    return {
      fetch: (id) => cache.get(id).then(trim),
      async close() {
        cache.clear()
      },
      size: () => cache.size,
    }
  },
}
