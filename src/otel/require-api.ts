/** Loading `@opentelemetry/api`, the optional peer dependency of `echostore/otel`. */
import type * as Api from '@opentelemetry/api'
import { requirePeer } from '../core/require-peer.js'

/** The `@opentelemetry/api` range EchoStore is built and tested against (its peer dependency range). */
const API_RANGE = '1'

/** Loads `@opentelemetry/api` through `load`; not installed, it throws a `MissingPeerDependencyError` naming the install command. */
export function requireOtelApi(load: (id: string) => unknown): typeof Api {
  return requirePeer<typeof Api>(load, '@opentelemetry/api', 'echostore/otel', API_RANGE)
}
