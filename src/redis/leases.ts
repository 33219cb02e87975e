import { badArgument, badNumber, describe } from '../core/errors.js'
import type { Id } from '../core/id.js'
import { leaseKey } from '../l2/keys.js'
import type { RedisClient } from './connection.js'
import type { L2Leases } from '../l2/store.js'
import type { ScriptsPipeline } from './l2.js'

/** The command `defineCommand` installs for releasing (ioredis runs it with EVALSHA; `redisL2` installs it as `RELEASE_LEASE_LUA`). */
export interface ReleaseScript {
  echostoreL2ReleaseLease(leaseKey: string, token: string): Promise<number>
}

/**
 * Per-id leases on Redis: one string key per lease (`leaseKey`: the pair's key + `:lease`, in the
 * pair's slot) holding the holder's token. Taken with `SET key token NX PX ttl`, released by a
 * script that deletes the key only while it holds the caller's token, voided by `DEL`, its holder read with `GET`. `open(op)`
 * throws once the store is closed; `run(key, command)` runs one command on the store's client
 * (the store's error handling around it).
 */
export function redisLeases(
  run: <T>(key: string, command: (client: RedisClient & ReleaseScript) => Promise<T>) => Promise<T>,
  pipelined: (keys: readonly string[], queue: (pipeline: ScriptsPipeline, i: number) => void) => Promise<unknown[]>,
  prefix: string,
  open: (op: string) => void,
): L2Leases {
  return {
    async acquire(table: string, id: Id, token: string, ttl: number): Promise<boolean> {
      open('leases.acquire')
      checkLease('acquire', token, ttl)
      const key = leaseKey(prefix, table, id)
      return (await run(key, (client) => client.set(key, token, 'PX', ttl, 'NX'))) === 'OK'
    },
    /** The `SET NX PX` of every id, in one pipeline per node. */
    async acquireMany(table: string, ids: readonly Id[], token: string, ttl: number): Promise<boolean[]> {
      open('leases.acquireMany')
      checkLease('acquireMany', token, ttl)
      if (!Array.isArray(ids)) throw badArgument(TypeError, `redisL2.leases.acquireMany: ids must be an array, got ${describe(ids)}`)
      if (ids.length === 0) return []
      const keys = ids.map((id) => leaseKey(prefix, table, id))
      const replies = await pipelined(keys, (pipeline, i) => pipeline.set(keys[i]!, token, 'PX', ttl, 'NX'))
      return replies.map((reply) => reply === 'OK')
    },
    /** The token under the lease key (`GET`). */
    async holder(table: string, id: Id): Promise<string | undefined> {
      open('leases.holder')
      const key = leaseKey(prefix, table, id)
      return (await run(key, (client) => client.get(key))) ?? undefined
    },
    async release(table: string, id: Id, token: string): Promise<boolean> {
      open('leases.release')
      const key = leaseKey(prefix, table, id)
      return (await run(key, (client) => client.echostoreL2ReleaseLease(key, token))) === 1
    },
    async void(table: string, id: Id): Promise<void> {
      open('leases.void')
      const key = leaseKey(prefix, table, id)
      await run(key, (client) => client.del(key))
    },
  }
}

/** Refuses an empty token or a ttl that is not an integer ≥ 1, naming the call. */
function checkLease(call: string, token: unknown, ttl: number): void {
  if (typeof token !== 'string' || token === '') throw badArgument(TypeError, `redisL2.leases.${call}: token must be a non-empty string, got ${describe(token)}`)
  if (!(Number.isSafeInteger(ttl) && ttl >= 1)) throw badNumber(ttl, `redisL2.leases.${call}: ttl must be an integer ≥ 1, got ${describe(ttl)}`)
}
