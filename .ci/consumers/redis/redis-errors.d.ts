// ioredis 6's declarations import redis-errors, which ships no types: under skipLibCheck off a project declares it.
declare module 'redis-errors'
