/**
 * The CommonJS build's `peers.ts` (tshy builds this file in its place): the same modules, loaded
 * through CommonJS's own `require`.
 */
import loading = require('./require-peers.js')

export = {
  /** The ioredis module, resolved from where EchoStore is installed; undefined when it is not installed. */
  ioredis: loading.optional(() => loading.requireIoredis(require)),
  /** The node-redis module (the `redis` package), as `ioredis`. */
  nodeRedis: loading.optional(() => loading.requireNodeRedis(require)),
  /** The Redis Cluster key-slot hash (CRC16 of the hash tag, modulo 16384), as both clients compute it. */
  calculateSlot: loading.requireSlotHash(require),
}
