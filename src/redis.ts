/**
 * `echostore/redis`: the Redis L2 and the Redis coherence bus, on an ioredis or a node-redis client.
 * Importing this entry loads whichever of ioredis and node-redis (the `redis` package), both optional
 * peer dependencies (ioredis 5 or 6, node-redis 5 or later), is installed; a `url` or `sentinels` needs one of them, a given client neither.
 * The core entry never loads them.
 * @module echostore/redis
 */
export { redisL2, DEFAULT_MAX_VALUE_BYTES, type RedisL2, type RedisL2Options, type RedisL2Client } from './redis/l2.js'
export { redisBus, DEFAULT_CHANNEL, DEFAULT_NAMESPACE, SUBSCRIBED_TIMEOUT, type RedisBus, type RedisBusOptions, type SubscribedOptions } from './redis/bus.js'
export {
  FAIL_FAST,
  CLUSTER_FAIL_FAST,
  NODE_REDIS_FAIL_FAST,
  type CompatibleClient,
  type NodeRedisClient,
  type RedisClient,
  type RedisConnectionOptions,
  type SentinelAddress,
} from './redis/connection.js'
/** An ioredis client EchoStore can use, by its shape (the name kept for code that imported it): see {@link RedisClient}. */
export type { RedisClient as IoredisClient } from './redis/connection.js'
