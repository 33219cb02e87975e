/**
 * The types of echostore/redis next to the ioredis a project installed (5 or 6), compiled by tsc with
 * every strict flag and skipLibCheck off, never run: the adapters take that ioredis's Redis and
 * Cluster clients, with EchoStore's connection settings spread into them.
 */
import { Cluster, Redis } from 'ioredis'
import { CLUSTER_FAIL_FAST, FAIL_FAST, type RedisBus, type RedisL2, redisBus, redisL2 } from 'echostore/redis'

const client = new Redis({ ...FAIL_FAST, lazyConnect: true })
const cluster = new Cluster([{ host: '127.0.0.1', port: 7100 }], { ...CLUSTER_FAIL_FAST, redisOptions: { ...FAIL_FAST }, lazyConnect: true })
export const stores: [RedisL2, RedisL2] = [redisL2({ client, prefix: 'app:' }), redisL2({ client: cluster, prefix: 'app:' })]
export const buses: [RedisBus, RedisBus] = [redisBus({ client, channel: 'app:coherence' }), redisBus({ client: cluster, channel: 'app:coherence' })]
