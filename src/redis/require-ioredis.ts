/**
 * Loading ioredis, the optional peer dependency of `echostore/redis`, so that a missing install
 * says how to fix it instead of failing deep in a stack trace.
 */
import type * as Ioredis from 'ioredis'
import { MissingPeerDependencyError } from '../core/errors.js'

/** The ioredis major version EchoStore is built and tested against (its peer dependency range). */
const IOREDIS_MAJOR = '5'

/**
 * Loads ioredis through `load` (the `require` of the build that asks, so it resolves from where
 * EchoStore is installed). ioredis not being installed throws a `MissingPeerDependencyError` that
 * names the install command; any other failure (a broken install of one of ioredis's own
 * dependencies) is thrown as it is.
 */
export function requireIoredis(load: (id: string) => unknown): typeof Ioredis {
  try {
    return load('ioredis') as typeof Ioredis
  } catch (error) {
    if (isNotFound(error, 'ioredis')) throw new MissingPeerDependencyError('ioredis', 'echostore/redis', IOREDIS_MAJOR, { cause: error })
    throw error
  }
}

/** True when `error` says that `id` itself, not one of its own imports, cannot be found. */
function isNotFound(error: unknown, id: string): boolean {
  return error instanceof Error && (error as { code?: unknown }).code === 'MODULE_NOT_FOUND' && error.message.startsWith(`Cannot find module '${id}'`)
}
