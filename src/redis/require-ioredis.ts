/**
 * Loading ioredis, the optional peer dependency of `echostore/redis`, so that a missing install
 * says how to fix it instead of failing deep in a stack trace.
 */
import type * as Ioredis from 'ioredis'
import { requirePeer } from '../core/require-peer.js'

/**
 * The ioredis major version the install command names: the newest of the peer range (`^5 || ^6`),
 * both of which EchoStore is tested against.
 */
const IOREDIS_MAJOR = '6'

/**
 * Loads ioredis through `load` (the `require` of the build that asks, so it resolves from where
 * EchoStore is installed). ioredis not being installed throws a `MissingPeerDependencyError` that
 * names the install command; any other failure (a broken install of one of ioredis's own
 * dependencies) is thrown as it is.
 */
export function requireIoredis(load: (id: string) => unknown): typeof Ioredis {
  return requirePeer<typeof Ioredis>(load, 'ioredis', 'echostore/redis', IOREDIS_MAJOR)
}

/** Loads the Redis Cluster key-slot hash through `load` (a dependency of EchoStore, and of ioredis). */
export function requireSlotHash(load: (id: string) => unknown): (key: string | Buffer) => number {
  return load('cluster-key-slot') as (key: string | Buffer) => number
}
