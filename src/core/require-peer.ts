/**
 * Loading an optional peer dependency for the entry that needs it, so that a missing install says
 * how to fix it instead of failing deep in a stack trace.
 */
import { MissingPeerDependencyError } from './errors.js'

/**
 * Loads `dependency` through `load` (the `require` of the build that asks, so it resolves from where
 * EchoStore is installed). It not being installed throws a `MissingPeerDependencyError` naming
 * `entry` and the install command for `range`; any other failure (a broken install of one of its
 * own dependencies) is thrown as it is.
 */
export function requirePeer<T>(load: (id: string) => unknown, dependency: string, entry: string, range: string): T {
  try {
    return load(dependency) as T
  } catch (error) {
    if (isNotFound(error, dependency)) throw new MissingPeerDependencyError(dependency, entry, range, { cause: error })
    throw error
  }
}

/** True when `error` says that `id` itself, not one of its own imports, cannot be found. */
function isNotFound(error: unknown, id: string): boolean {
  return error instanceof Error && (error as { code?: unknown }).code === 'MODULE_NOT_FOUND' && error.message.startsWith(`Cannot find module '${id}'`)
}
