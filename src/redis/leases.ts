import { badArgument, badNumber, describe } from '../core/errors.js'
import type { Id } from '../core/id.js'
import { leaseKey } from '../l2/keys.js'
import type { Call, Script } from './driver.js'
import type { L2Leases } from '../l2/store.js'

/**
 * Per-id leases on Redis: one string key per lease (`leaseKey`: the pair's key + `:lease`, in the
 * pair's slot) holding the holder's token. Taken with `SET key token NX PX ttl`, released by a
 * script (`release`, `RELEASE_LEASE_LUA`) that deletes the key only while it holds the caller's
 * token, voided by `DEL`, its holder read with `GET`. `open(op)` throws once the store is closed; `run(call)` runs one call on
 * the store's driver and `runMany(calls)` many in one round trip per node (the store's error
 * handling around them).
 */
export function redisLeases(run: (call: Call) => Promise<unknown>, runMany: (calls: readonly Call[]) => Promise<unknown[]>, release: Script, prefix: string, open: (op: string) => void): L2Leases {
  return {
    async acquire(table: string, id: Id, token: string, ttl: number): Promise<boolean> {
      open('leases.acquire')
      checkLease('acquire', token, ttl)
      const key = leaseKey(prefix, table, id)
      return (await run({ command: 'SET', key, args: [token, 'PX', ttl, 'NX'] })) === 'OK'
    },
    /** The `SET NX PX` of every id, in one pipeline per node. */
    async acquireMany(table: string, ids: readonly Id[], token: string, ttl: number): Promise<boolean[]> {
      open('leases.acquireMany')
      checkLease('acquireMany', token, ttl)
      if (!Array.isArray(ids)) throw badArgument(TypeError, `redisL2.leases.acquireMany: ids must be an array, got ${describe(ids)}`)
      if (ids.length === 0) return []
      const keys = ids.map((id) => leaseKey(prefix, table, id))
      const replies = await runMany(keys.map((key) => ({ command: 'SET', key, args: [token, 'PX', ttl, 'NX'] })))
      return replies.map((reply) => reply === 'OK')
    },
    /** The token under the lease key (`GET`). */
    async holder(table: string, id: Id): Promise<string | undefined> {
      open('leases.holder')
      const key = leaseKey(prefix, table, id)
      return ((await run({ command: 'GET', key, args: [] })) as string | null) ?? undefined
    },
    async release(table: string, id: Id, token: string): Promise<boolean> {
      open('leases.release')
      const key = leaseKey(prefix, table, id)
      return Number(await run({ script: release, keys: [key], args: [token] })) === 1 // an integer, or its text (ioredis's `stringNumbers`)
    },
    async void(table: string, id: Id): Promise<void> {
      open('leases.void')
      const key = leaseKey(prefix, table, id)
      await run({ command: 'DEL', key, args: [] })
    },
  }
}

/** Refuses an empty token or a ttl that is not an integer ≥ 1, naming the call. */
function checkLease(call: string, token: unknown, ttl: number): void {
  if (typeof token !== 'string' || token === '') throw badArgument(TypeError, `redisL2.leases.${call}: token must be a non-empty string, got ${describe(token)}`)
  if (!(Number.isSafeInteger(ttl) && ttl >= 1)) throw badNumber(ttl, `redisL2.leases.${call}: ttl must be an integer ≥ 1, got ${describe(ttl)}`)
}
