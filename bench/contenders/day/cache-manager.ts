import { createKeyv as createKeyvRedis } from '@keyv/redis'
import { createCache } from 'cache-manager'
import { createKeyv } from 'cacheable'
import type { DayCache, DayContender, DaySetup, StockRow } from './types.js'

/** The share of the ttl cache-manager's README gives `refreshThreshold` in its example (3 s of 10 s). */
const REFRESH_SHARE = 0.3

/** cache-manager 7: `wrap` with `refreshThreshold` (its background refresh; it has no grace window nor stale-if-error). */
export const cacheManagerDay: DayContender = {
  name: 'cache-manager',
  setup: (shared) =>
    `createCache({ ttl, refreshThreshold: ${REFRESH_SHARE} × ttl (its README's 3 s of 10 s: a read in the last 30 % of the ttl refreshes in the background), stores }) (no grace or stale-if-error option); wrap(id, fn); del(id); stores: [createKeyv({ ttl, lruSize, useClone: false }) (cacheable)` +
    (shared ? ", createKeyv(url, { namespace }) (@keyv/redis, as its README's multi-store example)]" : ']'),
  async create(s: DaySetup): Promise<DayCache> {
    const memory = createKeyv({ ttl: s.ttl, lruSize: s.capacity, useClone: false })
    const redis = s.redis !== undefined ? createKeyvRedis(s.redis.url, { namespace: `${s.redis.prefix}cm` }) : undefined
    const cache = createCache({ ttl: s.ttl, refreshThreshold: Math.round(REFRESH_SHARE * s.ttl), stores: redis !== undefined ? [memory, redis] : [memory] })
    return {
      read: (id) => cache.wrap<StockRow>(id, () => s.load(id)),
      invalidate: (id) => cache.del(id),
      async close() {
        await cache.disconnect()
      },
    }
  },
}
