/**
 * The CommonJS build's `ioredis.ts` (tshy builds this file in its place): the same module, loaded
 * through CommonJS's own `require`.
 */
import loading = require('./require-ioredis.js')

export = {
  /** The ioredis module, resolved from where EchoStore is installed. */
  ioredis: loading.requireIoredis(require),
  /** The Redis Cluster key-slot hash (CRC16 of the hash tag, modulo 16384), as ioredis computes it. */
  calculateSlot: loading.requireSlotHash(require),
}
