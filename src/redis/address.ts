import type { Cluster, Redis } from 'ioredis'

/** The `host:port` a single-node client talks to (for `echostore:l2` and the `db.*` span attributes); `undefined` for a cluster client, whose calls go to several nodes. */
export function addressOf(client: Redis | Cluster): string | undefined {
  const options = (client as Partial<Redis>).options
  if (options === undefined || 'startupNodes' in client) return undefined
  if (typeof options.path === 'string' && options.path !== '') return options.path
  return `${options.host ?? '127.0.0.1'}:${options.port ?? 6379}`
}
