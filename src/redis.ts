/**
 * `echostore/redis`: the Redis L2 and the Redis coherence bus. Importing this entry loads ioredis,
 * an optional peer dependency (`npm install ioredis`, version 5 or 6); the core entry never does.
 * @module echostore/redis
 */
export { redisL2, DEFAULT_MAX_VALUE_BYTES, type RedisL2, type RedisL2Options, type RedisL2Client } from './redis/l2.js'
export { redisBus, DEFAULT_CHANNEL, DEFAULT_NAMESPACE, SUBSCRIBED_TIMEOUT, type RedisBus, type RedisBusOptions, type SubscribedOptions } from './redis/bus.js'
export { FAIL_FAST, CLUSTER_FAIL_FAST, type CompatibleClient, type RedisClient, type RedisConnectionOptions, type SentinelAddress } from './redis/connection.js'
