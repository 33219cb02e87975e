import { COUNTER_NAMES, createTable } from '../../../src/index.js'
import { redisBus, redisL2 } from '../../../src/redis.js'
import { connectRedis, quitRedis } from '../../lib/redis.js'
import type { DayCache, DayContender, DaySetup, StockRow } from './types.js'

function echostoreDay(name: string, lease: boolean): DayContender {
  return {
    name,
    setup: (shared) =>
      'createTable({ ttl, grace: 10 × ttl, staleWhileRevalidate: true, loadTimeout: deadline, capacity }) (jitter 0.1 and graceBackoff min(ttl, 5 s) by default; the README\'s "origin sometimes down" and "readers must never wait" rows); fetch(id, loader); invalidate(id)' +
      (shared ? `; l2: redisL2({ client, prefix }), bus: redisBus({ client, channel })${lease ? ', lease: true' : ', no lease'}` : ''),
    async create(s: DaySetup): Promise<DayCache> {
      const client = s.redis !== undefined ? await connectRedis(s.redis.url) : undefined
      const l2 = client !== undefined ? redisL2({ client, prefix: s.redis!.prefix }) : undefined
      const bus = client !== undefined ? redisBus({ client, channel: `${s.redis!.prefix}bus` }) : undefined
      await bus?.subscribed()
      const table = createTable<StockRow>({
        name: 'stock',
        ttl: s.ttl,
        grace: s.grace,
        staleWhileRevalidate: true,
        loadTimeout: s.loadDeadline,
        capacity: s.capacity,
        ...(l2 !== undefined ? { l2, bus, ...(lease ? { lease: true } : {}) } : {}),
      })
      const load = (id: string | number) => s.load(id as string)
      return {
        read: (id) => table.fetch(id, load),
        invalidate: (id) => table.invalidate(id),
        counters: () => Object.fromEntries(COUNTER_NAMES.map((name) => [name, table.stats()[name]])),
        async close() {
          await table.close()
          await bus?.close()
          await l2?.close()
          if (client !== undefined) await quitRedis(client)
        },
      }
    },
  }
}

/** EchoStore; in the four-instance shape with `lease`. */
export const echostoreDayLease = echostoreDay('echostore', true)
/** EchoStore in the four-instance shape without `lease` (the one-instance shape runs only the row above). */
export const echostoreDayNoLease = echostoreDay('echostore, no lease', false)
