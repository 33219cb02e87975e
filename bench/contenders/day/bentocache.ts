import { BentoCache, bentostore } from 'bentocache'
import { memoryDriver } from 'bentocache/drivers/memory'
import { redisBusDriver, redisDriver } from 'bentocache/drivers/redis'
import { Redis } from 'ioredis'
import type { DayCache, DayContender, DaySetup, StockRow } from './types.js'

/** bentocache 1.x with its grace period (its fail-safe), the default soft timeout of 0 (a graced value answers at once while the factory runs in the background) and a hard timeout. */
export const bentocacheDay: DayContender = {
  name: 'bentocache',
  setup: (shared) =>
    'BentoCache({ ttl, grace: 10 × ttl, graceBackoff: ttl, timeout: 0 (its default: a graced value answers at once, the factory refreshes in the background), hardTimeout: deadline }); getOrSet({ key, factory }); delete({ key })' +
    (shared
      ? '; bentostore().useL1Layer(memoryDriver({ maxItems })) (serialize: false breaks its bus handler in 1.6).useL2Layer(redisDriver({ connection, prefix })).useBus(redisBusDriver({ connection }))'
      : '; one memory L1 store (maxItems, serialize: false)'),
  async create(s: DaySetup): Promise<DayCache> {
    // serialize: false keeps rows as objects in L1; with a bus, bentocache 1.6 needs its serializer there (its bus handler deserializes L1 entries).
    let store = bentostore().useL1Layer(memoryDriver({ maxItems: s.capacity, serialize: s.redis !== undefined }))
    const connections: Redis[] = []
    if (s.redis !== undefined) {
      const l2 = new Redis(s.redis.url)
      const bus = new Redis(s.redis.url)
      connections.push(l2, bus)
      store = store.useL2Layer(redisDriver({ connection: l2, prefix: `${s.redis.prefix}bento` })).useBus(redisBusDriver({ connection: bus }))
    }
    const bento = new BentoCache({
      default: 'day',
      ttl: s.ttl,
      grace: s.grace,
      graceBackoff: s.ttl,
      hardTimeout: s.loadDeadline,
      stores: { day: store },
    })
    return {
      read: (id) => bento.getOrSet<StockRow>({ key: id, factory: () => s.load(id) }),
      invalidate: (id) => bento.delete({ key: id }),
      async close() {
        await bento.disconnectAll()
        for (const c of connections) c.disconnect()
      },
    }
  },
}
