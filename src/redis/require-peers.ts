/**
 * Loading the Redis client libraries, the optional peer dependencies of `echostore/redis`: ioredis
 * and node-redis (the `redis` package). Either one is enough; a client given as `client` needs
 * neither to be loaded here. A missing install says how to fix it instead of failing deep in a
 * stack trace.
 */
import type * as Ioredis from 'ioredis'
import type * as NodeRedis from 'redis'
import { MissingPeerDependencyError } from '../core/errors.js'
import { requirePeer } from '../core/require-peer.js'

/** The ioredis major version the install command names: the newest EchoStore is tested against (its peer range is `^5 || ^6`). */
const IOREDIS_MAJOR = '6'

/** The node-redis major version the install command names: the newest EchoStore is tested against (its peer range is `^5 || ^6`). */
export const NODE_REDIS_MAJOR = '6'

/**
 * Loads ioredis through `load` (the `require` of the build that asks, so it resolves from where
 * EchoStore is installed). ioredis not being installed throws a `MissingPeerDependencyError` that
 * names the install command; any other failure (a broken install of one of ioredis's own
 * dependencies) is thrown as it is.
 */
export function requireIoredis(load: (id: string) => unknown): typeof Ioredis {
  return requirePeer<typeof Ioredis>(load, 'ioredis', 'echostore/redis', IOREDIS_MAJOR)
}

/** Loads node-redis (the `redis` package) through `load`, as {@link requireIoredis} loads ioredis. */
export function requireNodeRedis(load: (id: string) => unknown): typeof NodeRedis {
  return requirePeer<typeof NodeRedis>(load, 'redis', 'echostore/redis', NODE_REDIS_MAJOR)
}

/** The module `require` loads, or undefined when that one is not installed (a broken install still throws). */
export function optional<T>(require: () => T): T | undefined {
  try {
    return require()
  } catch (error) {
    if (error instanceof MissingPeerDependencyError) return undefined
    throw error
  }
}

/** The error for a `url` or `sentinels` when neither client library is installed: it names both. */
export function neitherClient(adapter: string): MissingPeerDependencyError {
  return new MissingPeerDependencyError('redis', 'echostore/redis', NODE_REDIS_MAJOR, undefined, { also: 'ioredis', alsoRange: IOREDIS_MAJOR, adapter })
}

/** Loads the Redis Cluster key-slot hash through `load` (a dependency of EchoStore, and of ioredis). */
export function requireSlotHash(load: (id: string) => unknown): (key: string | Buffer) => number {
  return load('cluster-key-slot') as (key: string | Buffer) => number
}
