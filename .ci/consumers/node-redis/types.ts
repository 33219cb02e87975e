/**
 * The types of echostore/redis in a project that uses node-redis alone (no ioredis installed),
 * compiled by tsc with every strict flag and skipLibCheck off, never run: the adapters take its
 * clients, and refuse what is no client.
 */
import { createClient, createCluster } from 'redis'
import { NODE_REDIS_FAIL_FAST, type RedisBus, type RedisL2, redisBus, redisL2 } from 'echostore/redis'

const client = createClient({ url: 'redis://127.0.0.1:6379', ...NODE_REDIS_FAIL_FAST })
const cluster = createCluster({ rootNodes: [{ url: 'redis://127.0.0.1:7100' }], defaults: NODE_REDIS_FAIL_FAST })
export const stores: [RedisL2, RedisL2] = [redisL2({ client, prefix: 'app:' }), redisL2({ client: cluster, prefix: 'app:' })]
export const buses: [RedisBus, RedisBus] = [redisBus({ client, channel: 'app:coherence' }), redisBus({ client: cluster, channel: 'app:coherence' })]
// @ts-expect-error a number is no client
export const refused = redisL2({ client: 42 })
