/**
 * `echostore/redis`: the Redis L2 and the Redis coherence bus. Importing this entry loads ioredis,
 * an optional peer dependency (`npm install ioredis@5`); the core entry never does.
 * @module echostore/redis
 */
export { redisL2, DEFAULT_MAX_VALUE_BYTES, type RedisL2, type RedisL2Options, type RedisL2Client } from './redis/l2.js'
export { redisBus, DEFAULT_CHANNEL, type RedisBus, type RedisBusOptions } from './redis/bus.js'
