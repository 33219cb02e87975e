import { COUNTER_NAMES, createTable } from '../../../src/index.js'
import { redisBus, redisL2 } from '../../../src/redis.js'
import { connectClient, type RedisClientName } from '../../lib/redis.js'
import type { DayCache, DayContender, DaySetup, StockRow } from './types.js'

function echostoreDay(name: string, lease: boolean, clientName: RedisClientName): DayContender {
  const made = clientName === 'ioredis' ? 'an ioredis client' : 'a node-redis client (createClient({ url }) + connect())'
  return {
    name,
    setup: (shared) =>
      'createTable({ ttl, grace: 10 × ttl, staleWhileRevalidate: true, loadTimeout: deadline, capacity }) (jitter 0.1 and graceBackoff min(ttl, 5 s) by default; the README\'s "origin sometimes down" and "readers must never wait" rows); fetch(id, loader); invalidate(id)' +
      (shared ? `; l2: redisL2({ client, prefix }), bus: redisBus({ client, channel })${lease ? ', lease: true' : ', no lease'}; client: ${made}` : ''),
    async create(s: DaySetup): Promise<DayCache> {
      const connection = s.redis !== undefined ? await connectClient(clientName, s.redis.url) : undefined
      const client = connection?.client
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
          await connection?.close()
        },
      }
    },
  }
}

/** EchoStore; in the four-instance shape with `lease`, on ioredis. */
export const echostoreDayLease = echostoreDay('echostore', true, 'ioredis')
/** EchoStore in the four-instance shape without `lease`, on ioredis (the one-instance shape runs only the row above). */
export const echostoreDayNoLease = echostoreDay('echostore, no lease', false, 'ioredis')
/** EchoStore in the four-instance shape with `lease`, on node-redis. */
export const echostoreDayLeaseNodeRedis = echostoreDay('echostore (node-redis)', true, 'node-redis')
/** EchoStore in the four-instance shape without `lease`, on node-redis. */
export const echostoreDayNoLeaseNodeRedis = echostoreDay('echostore, no lease (node-redis)', false, 'node-redis')
