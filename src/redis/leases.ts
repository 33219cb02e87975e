import type { Cluster, Redis } from 'ioredis'
import { badArgument, badNumber, describe } from '../core/errors.js'
import type { Id } from '../core/id.js'
import { leaseKey } from '../l2/keys.js'
import { RELEASE_LEASE_LUA } from './scripts.js'
import type { L2Leases } from '../l2/store.js'

/** The command `defineCommand` installs for releasing (ioredis runs it with EVALSHA). */
interface ReleaseScript {
  echostoreL2ReleaseLease(leaseKey: string, token: string): Promise<number>
}

/**
 * Per-id leases on Redis: one string key per lease (`leaseKey`: the pair's key + `:lease`, in the
 * pair's slot) holding the holder's token. Taken with `SET key token NX PX ttl`, released by a
 * script that deletes the key only while it holds the caller's token, voided by `DEL`. `open(op)`
 * throws once the store is closed.
 */
export function redisLeases(client: Redis | Cluster, prefix: string, open: (op: string) => void): L2Leases {
  client.defineCommand('echostoreL2ReleaseLease', { lua: RELEASE_LEASE_LUA, numberOfKeys: 1 })
  const script = client as unknown as ReleaseScript
  return {
    async acquire(table: string, id: Id, token: string, ttl: number): Promise<boolean> {
      open('leases.acquire')
      if (typeof token !== 'string' || token === '') throw badArgument(TypeError, `redisL2.leases.acquire: token must be a non-empty string, got ${describe(token)}`)
      if (!(Number.isSafeInteger(ttl) && ttl >= 1)) throw badNumber(ttl, `redisL2.leases.acquire: ttl must be an integer ≥ 1, got ${describe(ttl)}`)
      return (await client.set(leaseKey(prefix, table, id), token, 'PX', ttl, 'NX')) === 'OK'
    },
    async release(table: string, id: Id, token: string): Promise<boolean> {
      open('leases.release')
      return (await script.echostoreL2ReleaseLease(leaseKey(prefix, table, id), token)) === 1
    },
    async void(table: string, id: Id): Promise<void> {
      open('leases.void')
      await client.del(leaseKey(prefix, table, id))
    },
  }
}
