/**
 * The Redis client libraries, looked for once, when `echostore/redis` is imported: only the Redis
 * adapters import this module, so the core entry never loads them. Neither is required at import:
 * a `url` or `sentinels` needs one of them (see `connection.ts`), a given client none. This is the
 * ES module build's file; the CommonJS build uses `peers-cjs.cts` in its place.
 */
import { createRequire } from 'node:module'
import { optional, requireIoredis, requireNodeRedis, requireSlotHash } from './require-peers.js'

// biome-ignore lint/suspicious/noTsIgnore: @ts-expect-error would fail the ESM build, where there is no error
// @ts-ignore: tshy type-checks this file in the CommonJS build too (where import.meta does not exist) before replacing it with peers-cjs.cts
const load = createRequire(import.meta.url)

/** The ioredis module, resolved from where EchoStore is installed; undefined when it is not installed. */
export const ioredis = optional(() => requireIoredis(load))

/** The node-redis module (the `redis` package), as {@link ioredis}. */
export const nodeRedis = optional(() => requireNodeRedis(load))

/** The Redis Cluster key-slot hash (CRC16 of the hash tag, modulo 16384), as both clients compute it. */
export const calculateSlot = requireSlotHash(load)
