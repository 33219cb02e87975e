/**
 * ioredis, loaded once, when `echostore/redis` is imported: only the Redis adapters import this
 * module, so the core entry never loads ioredis and works where it is not installed. This is the
 * ES module build's file; the CommonJS build uses `ioredis-cjs.cts` in its place.
 */
import { createRequire } from 'node:module'
import { requireIoredis, requireSlotHash } from './require-ioredis.js'

/** The ioredis module, resolved from where EchoStore is installed. */
// @ts-ignore: tshy type-checks this file in the CommonJS build too (where import.meta does not exist) before replacing it with ioredis-cjs.cts
export const ioredis = requireIoredis(createRequire(import.meta.url))

/** The Redis Cluster key-slot hash (CRC16 of the hash tag, modulo 16384), as ioredis computes it. */
// @ts-ignore: as above
export const calculateSlot = requireSlotHash(createRequire(import.meta.url))
