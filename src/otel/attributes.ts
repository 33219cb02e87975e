/** The attribute names `echostore/otel` puts on spans and metrics: EchoStore's own, and the semantic conventions' for databases and errors. */

/** The table's name. */
export const TABLE = 'echostore.table'
/** A fetch's outcome: `hit`, `negative`, `miss`, `coalesced`, `stale` or `error`. */
export const OUTCOME = 'echostore.outcome'
/** On a flight's span: the callers it answered, its starter's included. */
export const WAITERS = 'echostore.waiters'
/** An L2 call's operation (`get`, `set`, `nextVersion`, `clear`, `leases.acquire`, …). */
export const L2_OP = 'echostore.l2.op'
/** A lease acquisition's outcome: `acquired`, `busy` (another holds it) or `failed`. */
export const LEASE_OUTCOME = 'echostore.lease.outcome'
/** The id (or ids) read: on spans only, and only with `recordIds: true`. */
export const ID = 'echostore.id'
export const IDS = 'echostore.ids'
/** The semantic conventions' names: for a database call, its server, and an error's type. */
export const SEMCONV = { dbSystem: 'db.system.name', dbOperation: 'db.operation.name', serverAddress: 'server.address', serverPort: 'server.port', errorType: 'error.type' } as const

/** An error's type for `error.type`: its `code` when it has a string one (`ECHOSTORE_*`), else its class name. */
export function errorType(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code
  if (typeof code === 'string' && code !== '') return code
  return error instanceof Error ? error.constructor.name : typeof error
}

/** A `host:port` (or a socket path) as `server.address` and `server.port`. */
export function serverAttributes(address: string): Record<string, string | number> {
  const colon = address.lastIndexOf(':')
  const port = colon > 0 ? Number(address.slice(colon + 1)) : Number.NaN
  if (!Number.isInteger(port)) return { [SEMCONV.serverAddress]: address }
  return { [SEMCONV.serverAddress]: address.slice(0, colon).replace(/^\[|\]$/g, ''), [SEMCONV.serverPort]: port }
}
