import type { Cluster } from 'ioredis'
import { calculateSlot, ioredis } from './ioredis.js'
import { openConnection, validateConnection, type RedisClient, type RedisConnectionOptions } from './connection.js'
import { L2ClosedError, L2CorruptEntryError, L2UnfitValueError, RedisUnreachableError, badArgument, badNumber, describe } from '../core/errors.js'
import { addressOf } from './address.js'
import type { Id } from '../core/id.js'
import { MAX_VERSION, isVersion } from '../core/versions.js'
import { jsonCodec, type Codec } from '../l2/codec.js'
import { BUCKETS, LONGEST_ENTRY_MS, TAG_TTL_MS, bucketGenerationKey, entryKey, generationKey, l2Key, leaseKey, tagVersionKey, unfitPrefix, VERSION_TTL_MS, versionKey } from '../l2/keys.js'
import { HEADER_SCAN, decodeEntry, encodeEntry, isKind } from './entry.js'
import { CLEAR_LUA, GET_LUA, GET_STATUS, INVALIDATE_TAG_LUA, LEASE_STATUS, NEXT_VERSION_LUA, READ_OR_LEASE_LUA, RELEASE_LEASE_LUA, SET_AND_RELEASE_LUA, SET_LUA } from './scripts.js'
import { redisLeases, type ReleaseScript } from './leases.js'
import type { L2Entry, L2Store, L2Write, LeaseRead } from '../l2/store.js'

/** An ioredis client the store can use: a single-node (or Sentinel) client or a cluster client. */
export type RedisL2Client = RedisClient

/** The Redis L2 store: an {@link L2Store} that also supports `await using`. */
export interface RedisL2 extends L2Store {
  /** `await using` support: the same as `close()`. */
  [Symbol.asyncDispose](): Promise<void>
}

/** Options of {@link redisL2}: where Redis is (exactly one of `client`, `url` and `sentinels`), and how entries are kept. */
export interface RedisL2Options extends RedisConnectionOptions {
  /**
   * Written verbatim before every key (a tenant, an environment): the store's key space. Default
   * `'echostore:'`. Give the bus the same string as its `namespace`. A prefix holding `{` or `}` is
   * refused: it would take over the keys' Redis Cluster hash tag.
   */
  prefix?: string
  /** How values become bytes. Default {@link jsonCodec}. */
  codec?: Codec
  /**
   * Bound in ms on each call, carried as the store's `timeout` for the table to apply on its own clock
   * (the adapter sets no timers). Default: none here, so the table uses `DEFAULT_L2_TIMEOUT` (50 ms).
   */
  timeout?: number
  /**
   * Largest encoded value, in bytes, the store writes or decodes; a larger one is never written (the
   * table counts `l2_oversize` and answers from the loader) and a larger entry found is never read
   * across the wire, so decoding it cannot hold the event loop. Default {@link DEFAULT_MAX_VALUE_BYTES} (1 MiB).
   */
  maxValueBytes?: number
}

/** The commands `defineCommand` installs on the client (ioredis loads them with EVALSHA, EVAL on NOSCRIPT). */
interface Scripts {
  echostoreL2GetBuffer(generationKey: string, dataKey: string, maxBytes: number): Promise<GetReply>
  echostoreL2Set(generationKey: string, dataKey: string, version: number, ttl: number, data: Buffer): Promise<number>
  echostoreL2NextVersion(versionKey: string, generationKey: string, dataKey: string, versionTtl: number, floor: number): Promise<number>
  echostoreL2Clear(generationKey: string, longestEntry: number): Promise<number>
  echostoreL2InvalidateTag(tagKey: string, floor: number, ttl: number): Promise<number>
  echostoreL2SetAndRelease(generationKey: string, dataKey: string, leaseKey: string, version: number, ttl: number, data: Buffer, token: string): Promise<number>
  echostoreL2ReadOrLeaseBuffer(generationKey: string, dataKey: string, leaseKey: string, maxBytes: number, token: string, ttl: number, floor: number): Promise<[number, Buffer | null, number, number, number]>
}

/** What {@link GET_LUA} answers (see `scripts.ts`). */
type GetReply = [number, Buffer | null, number, number] | [number] | null

/** A pipeline with the scripts installed, as the store queues commands on it. */
export interface ScriptsPipeline {
  echostoreL2GetBuffer(generationKey: string, dataKey: string, maxBytes: number): ScriptsPipeline
  set(key: string, value: string, px: 'PX', ttl: number, nx: 'NX'): ScriptsPipeline
  exec(): Promise<[Error | null, unknown][] | null>
}

/** The longest grace an entry's header carries (11 digits). */
const MAX_GRACE = 99_999_999_999

/** The default bound on one encoded value: 1 MiB. Larger values are neither written nor decoded. */
export const DEFAULT_MAX_VALUE_BYTES = 1_048_576

function checkWrite(entry: L2Write): void {
  if (!isKind(entry.kind)) throw badArgument(TypeError, `redisL2.set: kind must be 'value', 'absent' or 'tombstone', got ${describe(entry.kind)}`)
  if (!isVersion(entry.version)) throw badNumber(entry.version, `redisL2.set: version must be an integer in [0, ${MAX_VERSION}], got ${describe(entry.version)}`)
  if (!Number.isSafeInteger(entry.ttl) || entry.ttl < 1) throw badNumber(entry.ttl, `redisL2.set: ttl must be an integer ≥ 1, got ${describe(entry.ttl)}`)
  if (entry.grace !== undefined && !(Number.isSafeInteger(entry.grace) && entry.grace >= 0 && entry.grace <= MAX_GRACE)) {
    throw badNumber(entry.grace, `redisL2.set: grace must be an integer in [0, ${MAX_GRACE}], got ${describe(entry.grace)}`)
  }
}

function validate(options: RedisL2Options): void {
  if (typeof options !== 'object' || options === null) throw badArgument(TypeError, `redisL2: options must be an object, got ${describe(options)}`)
  validateConnection('redisL2', options)
  const { client, prefix, codec, timeout, maxValueBytes } = options
  if (prefix !== undefined && (typeof prefix !== 'string' || Buffer.from(prefix, 'utf8').toString('utf8') !== prefix)) {
    throw badArgument(TypeError, `redisL2: the option \`prefix\` must be a string without lone surrogates (keys are UTF-8), got ${describe(prefix)}`)
  }
  const unfit = unfitPrefix(prefix ?? '') ?? unfitPrefix(keyPrefixOf(client))
  if (unfit !== undefined) {
    throw badArgument(TypeError, `redisL2: the option \`prefix\` (with the client's own keyPrefix ${describe(keyPrefixOf(client))} before it) would break Redis Cluster slot hashing: ${unfit}; got ${describe(prefix)}`)
  }
  if (codec !== undefined && (typeof codec?.encode !== 'function' || typeof codec?.decode !== 'function')) {
    throw badArgument(TypeError, `redisL2: the option \`codec\` must have encode and decode functions, got ${describe(codec)}`)
  }
  if (timeout !== undefined && !(typeof timeout === 'number' && Number.isFinite(timeout) && timeout > 0)) {
    throw badNumber(timeout, `redisL2: the option \`timeout\` must be a finite number of ms > 0, got ${describe(timeout)}`)
  }
  if (maxValueBytes !== undefined && !(Number.isSafeInteger(maxValueBytes) && maxValueBytes >= 1 && maxValueBytes <= MAX_REDIS_STRING)) {
    throw badNumber(maxValueBytes, `redisL2: the option \`maxValueBytes\` must be an integer in [1, ${MAX_REDIS_STRING}], got ${describe(maxValueBytes)}`)
  }
}

/** A given client's own `keyPrefix` (written before the store's prefix), or ''. */
function keyPrefixOf(client: unknown): string {
  const options = (client as { options?: { keyPrefix?: unknown; redisOptions?: { keyPrefix?: unknown } } } | undefined)?.options
  const keyPrefix = options?.keyPrefix ?? options?.redisOptions?.keyPrefix
  return typeof keyPrefix === 'string' ? keyPrefix : ''
}

function checkTags(op: string, tags: readonly string[]): void {
  if (!Array.isArray(tags) || !tags.every((tag) => typeof tag === 'string')) throw badArgument(TypeError, `redisL2.${op}: tags must be an array of strings, got ${describe(tags)}`)
}

/**
 * A tag's version as its key holds it: 0 for none; {@link MAX_VERSION} for garbage, so that every
 * entry carrying the tag reads as stale until the next invalidation repairs the key.
 */
function tagVersionOf(held: string | null): number {
  if (held === null) return 0
  const version = Number(held)
  return isVersion(version) && /^\d+$/.test(held) ? version : MAX_VERSION
}

/** True for an error Redis itself answered (a reply), as opposed to one of the connection. */
function isReply(error: unknown): boolean {
  return error instanceof ioredis.ReplyError || (error instanceof Error && /^(ERR|WRONGTYPE|NOSCRIPT|MOVED|ASK|CROSSSLOT|READONLY|CLUSTERDOWN|TRYAGAIN|LOADING|BUSY|OOM|NOPERM|NOAUTH|WRONGPASS)\b/.test(error.message))
}

/** The largest string Redis holds (512 MiB), less room for the header. */
const MAX_REDIS_STRING = 512 * 1024 * 1024 - HEADER_SCAN

/**
 * An L2 on Redis through ioredis: one node, a Cluster, or a Sentinel set. Each entry is one string
 * key (see `l2Key` for the key, and `entry.ts` for the bytes) written by a script that refuses only
 * a strictly higher version than the one held, with `PX ttl`; `get` reads the entry and its `PTTL`
 * atomically and answers the remaining lifetime. `nextVersion` mints the next version in a
 * per-(table, id) version key (see `scripts.ts`), which lives `VERSION_TTL_MS` (7 days) after its
 * last use. An entry that cannot be decoded, holds poisoned JSON, another Redis type, or has no
 * expiry makes `get` reject with `L2CorruptEntryError`; one larger than `maxValueBytes` with
 * `L2UnfitValueError`; the next write replaces either.
 *
 * A table's ids are spread over 1024 buckets (`BUCKETS`), each one Cluster hash tag holding its ids'
 * keys and its own clear generation, so no master serves more than its share of a table and a
 * master that fails touches only its own ids. `clear(table)` bumps every bucket's generation; entries
 * live under keys of their generation (see `entryKey`), so the old ones are never read again and
 * expire on their own. Every script reads the id's bucket generation itself, in the same step as
 * the entry: a process that missed a clear never reads an entry from before it, nor writes into
 * the past, and a get or set is one command on one node.
 *
 * A tag's version lives under a key of its own (see `tagVersionKey`), minted by a script like an
 * id's version and kept `TAG_TTL_MS`; `tagVersions` reads them (one `GET` per tag, each routed to
 * its master), and a tagged entry carries its tag keys and birth after its header (see `entry.ts`).
 *
 * `shard(table, id)` names the master serving an id (`host:port`, on a cluster), so the table's
 * breaker opens per master; `cause(table, id)` is the error of that node's outage, if any. A call
 * that fails because the connection is down rejects with `RedisUnreachableError`, naming the host
 * and carrying the connection's error as `cause`.
 *
 * The adapter does I/O only: no timeouts or fallback (the table's facade owns them). The scripts
 * are installed on the client with `defineCommand` (`echostoreL2Get`, `echostoreL2Set`,
 * `echostoreL2NextVersion`, `echostoreL2Clear`, `echostoreL2InvalidateTag`, `echostoreL2ReleaseLease`); leases are in
 * `leases.ts`. A client's own `keyPrefix`, if any, goes before `prefix`.
 */
export function redisL2(options: RedisL2Options): RedisL2 {
  validate(options)
  const { prefix = 'echostore:', codec = jsonCodec, maxValueBytes = DEFAULT_MAX_VALUE_BYTES } = options
  const connection = openConnection('redisL2', options)
  const defined = new WeakSet<RedisClient>()
  let closing: Promise<void> | undefined

  /** The client with the scripts installed (once, per client). */
  async function scriptsOn(): Promise<Scripts & ReleaseScript & RedisClient> {
    let client = connection.current()
    if (client === undefined) {
      // Fail fast while the url does not answer: wait for the first answer only.
      await connection.asked
      client = connection.current()
      if (client === undefined) throw new RedisUnreachableError('redisL2', connection.where, 'does not answer', { cause: connection.cause() })
    }
    if (!defined.has(client)) {
      client.defineCommand('echostoreL2Get', { lua: GET_LUA, numberOfKeys: 2 })
      client.defineCommand('echostoreL2Set', { lua: SET_LUA, numberOfKeys: 2 })
      client.defineCommand('echostoreL2NextVersion', { lua: NEXT_VERSION_LUA, numberOfKeys: 3 })
      client.defineCommand('echostoreL2Clear', { lua: CLEAR_LUA, numberOfKeys: 1 })
      client.defineCommand('echostoreL2InvalidateTag', { lua: INVALIDATE_TAG_LUA, numberOfKeys: 1 })
      client.defineCommand('echostoreL2ReleaseLease', { lua: RELEASE_LEASE_LUA, numberOfKeys: 1 })
      client.defineCommand('echostoreL2ReadOrLease', { lua: READ_OR_LEASE_LUA, numberOfKeys: 3 })
      client.defineCommand('echostoreL2SetAndRelease', { lua: SET_AND_RELEASE_LUA, numberOfKeys: 3 })
      defined.add(client)
    }
    return client as unknown as Scripts & ReleaseScript & RedisClient
  }

  /** The master serving `key` (`host:port`) on a cluster whose slot map is known; undefined elsewhere. */
  function nodeOf(key: string): string | undefined {
    const client = connection.current()
    if (client === undefined || !(client instanceof ioredis.Cluster || (client as { isCluster?: boolean }).isCluster === true)) return undefined
    return (client as Cluster).slots[calculateSlot(key)]?.[0]
  }

  /** Runs one command; a connection failure rejects with `RedisUnreachableError` carrying the node's outage. */
  async function run<T>(key: string, command: (scripts: Scripts & ReleaseScript & RedisClient) => Promise<T>): Promise<T> {
    try {
      return await command(await scriptsOn())
    } catch (error) {
      if (isReply(error) || error instanceof RedisUnreachableError) throw error
      const node = nodeOf(key)
      const cause = connection.cause(node) ?? error
      throw new RedisUnreachableError('redisL2', node ?? connection.where, 'did not answer', { cause })
    }
  }

  /**
   * Runs one command per key of `keys` as one pipeline per node: one on a single node (or Sentinel
   * set), one per master serving their slots on a cluster, as ioredis groups a pipeline (a slot not
   * in the slot map yet goes alone). `queue(pipeline, i)` queues the command of `keys[i]`. Answers
   * the replies in the order of `keys`; a command that failed fails the call, as `run` would.
   */
  async function pipelined(keys: readonly string[], queue: (pipeline: ScriptsPipeline, i: number) => void): Promise<unknown[]> {
    const groups = new Map<string, number[]>()
    const client = await scriptsOn()
    const slots = client instanceof ioredis.Cluster || (client as { isCluster?: boolean }).isCluster === true ? (client as Cluster).slots : undefined
    keys.forEach((key, i) => {
      const slot = slots === undefined ? 0 : calculateSlot(key)
      const group = slots === undefined ? '' : (slots[slot]?.join(',') ?? `slot ${slot}`)
      const at = groups.get(group)
      if (at === undefined) groups.set(group, [i])
      else at.push(i)
    })
    const replies = new Array<unknown>(keys.length)
    await Promise.all(
      [...groups.values()].map((indices) =>
        run(keys[indices[0]!]!, async (c) => {
          const pipeline = c.pipeline() as unknown as ScriptsPipeline
          for (const i of indices) queue(pipeline, i)
          const answers = (await pipeline.exec()) ?? []
          indices.forEach((i, at) => {
            const [error, reply] = answers[at] ?? [new Error('redisL2: a pipeline answered fewer replies than it had commands'), undefined]
            if (error !== null) throw error
            replies[i] = reply
          })
        }),
      ),
    )
    return replies
  }

  /** The entry of (table, id) in a reply of {@link GET_LUA}; rejects as `get` does for what cannot be read. */
  function entryOf(table: string, id: Id, reply: GetReply): L2Entry | undefined {
    if (reply === null) return undefined
    const [status, data, ttl, generation] = reply
    if (status === GET_STATUS.badGeneration) throw new L2CorruptEntryError(generationKey(prefix, table, id), 'the generation key holds garbage; table.clear() repairs it')
    const key = entryKey(prefix, table, id, generation ?? 0)
    if (status === GET_STATUS.wrongType) throw new L2CorruptEntryError(key, 'the key holds another Redis type')
    if (status === GET_STATUS.tooLarge) throw new L2UnfitValueError(key, 'size', `larger than maxValueBytes ${maxValueBytes}`)
    if (ttl === -1) throw new L2CorruptEntryError(key, 'the key has no expiry')
    if (ttl === undefined || ttl <= 0 || data === undefined || data === null) return undefined
    return decodeEntry(key, data, ttl, codec)
  }

  function open(op: string): void {
    if (closing !== undefined) throw new L2ClosedError('redisL2', op)
  }

  return {
    ...(options.timeout === undefined ? {} : { timeout: options.timeout }),
    keySpace: `${keyPrefixOf(options.client)}${prefix}`,
    /** The `host:port` of a single-node (or Sentinel) connection once known; undefined for a cluster. */
    get address(): string | undefined {
      const client = connection.current()
      // Before a url's node answered: the host:port it names (a cluster, once detected, has none).
      if (client === undefined) return typeof options.url === 'string' ? connection.where : undefined
      return addressOf(client)
    },
    /** `await using` support: the same as `close()`. */
    [Symbol.asyncDispose](): Promise<void> {
      return this.close()
    },

    async get(table: string, id: Id): Promise<L2Entry | undefined> {
      open('get')
      const base = l2Key(prefix, table, id)
      return entryOf(table, id, await run(base, (s) => s.echostoreL2GetBuffer(generationKey(prefix, table, id), base, maxValueBytes + HEADER_SCAN)))
    },

    /**
     * The entries of `ids` in one pipeline per node, each read by the script `get` runs (with its
     * bucket's generation, in the same step); an entry `get` would reject is `undefined` in its place.
     */
    async getMany(table: string, ids: readonly Id[]): Promise<(L2Entry | undefined)[]> {
      open('getMany')
      if (!Array.isArray(ids)) throw badArgument(TypeError, `redisL2.getMany: ids must be an array, got ${describe(ids)}`)
      if (ids.length === 0) return []
      const bases = ids.map((id) => l2Key(prefix, table, id))
      const replies = await pipelined(bases, (pipeline, i) => pipeline.echostoreL2GetBuffer(generationKey(prefix, table, ids[i]!), bases[i]!, maxValueBytes + HEADER_SCAN))
      return ids.map((id, i) => {
        try {
          return entryOf(table, id, replies[i] as GetReply)
        } catch {
          return undefined
        }
      })
    },

    async set(table: string, id: Id, entry: L2Write): Promise<boolean> {
      open('set')
      checkWrite(entry)
      const base = l2Key(prefix, table, id)
      const data = encodeEntry(base, entry, codec, maxValueBytes)
      const lifetime = entry.ttl + (entry.grace ?? 0)
      return (await run(base, (s) => s.echostoreL2Set(generationKey(prefix, table, id), base, entry.version, lifetime, data))) === 1
    },

    async nextVersion(table: string, id: Id, floor: number): Promise<number> {
      open('nextVersion')
      if (!isVersion(floor)) throw badNumber(floor, `redisL2.nextVersion: floor must be an integer in [0, ${MAX_VERSION}], got ${describe(floor)}`)
      const base = l2Key(prefix, table, id)
      return run(base, (s) => s.echostoreL2NextVersion(versionKey(prefix, table, id), generationKey(prefix, table, id), base, VERSION_TTL_MS, floor))
    },

    async clear(table: string): Promise<void> {
      open('clear')
      const keys = Array.from({ length: BUCKETS }, (_, bucket) => bucketGenerationKey(prefix, table, bucket))
      await Promise.all(keys.map((key) => run(key, (s) => s.echostoreL2Clear(key, LONGEST_ENTRY_MS))))
    },

    async tagVersions(table: string, tags: readonly string[]): Promise<number[]> {
      open('tagVersions')
      checkTags('tagVersions', tags)
      return Promise.all(
        tags.map(async (tag) => {
          const key = tagVersionKey(prefix, table, tag)
          return tagVersionOf(await run(key, (s) => s.get(key)))
        }),
      )
    },

    async invalidateTags(table: string, tags: readonly string[], floor: number): Promise<number[]> {
      open('invalidateTags')
      checkTags('invalidateTags', tags)
      if (!isVersion(floor)) throw badNumber(floor, `redisL2.invalidateTags: floor must be an integer in [0, ${MAX_VERSION}], got ${describe(floor)}`)
      return Promise.all(
        tags.map((tag) => {
          const key = tagVersionKey(prefix, table, tag)
          return run(key, (s) => s.echostoreL2InvalidateTag(key, floor, TAG_TTL_MS))
        }),
      )
    },

    shard(table: string, id: Id): string | undefined {
      return nodeOf(l2Key(prefix, table, id))
    },

    cause(table: string, id: Id | undefined): Error | undefined {
      return connection.cause(id === undefined ? undefined : nodeOf(l2Key(prefix, table, id)))
    },

    leases: {
      ...redisLeases(run, pipelined, prefix, open),
      /** One script: the write of `set`, then the compare-and-delete of `release`. */
      async setAndRelease(table: string, id: Id, entry: L2Write, token: string): Promise<boolean> {
        open('leases.setAndRelease')
        checkWrite(entry)
        if (typeof token !== 'string' || token === '') throw badArgument(TypeError, `redisL2.leases.setAndRelease: token must be a non-empty string, got ${describe(token)}`)
        const base = l2Key(prefix, table, id)
        const data = encodeEntry(base, entry, codec, maxValueBytes)
        const lifetime = entry.ttl + (entry.grace ?? 0)
        return (await run(base, (s) => s.echostoreL2SetAndRelease(generationKey(prefix, table, id), base, leaseKey(prefix, table, id), entry.version, lifetime, data, token))) === 1
      },
      /** One script: the read of `get` and, when it finds no fill, the `SET NX PX` of `acquire`. */
      async readOrAcquire(table: string, id: Id, token: string, ttl: number, floor: number): Promise<LeaseRead> {
        open('leases.readOrAcquire')
        if (typeof token !== 'string' || token === '') throw badArgument(TypeError, `redisL2.leases.readOrAcquire: token must be a non-empty string, got ${describe(token)}`)
        if (!(Number.isSafeInteger(ttl) && ttl >= 1)) throw badNumber(ttl, `redisL2.leases.readOrAcquire: ttl must be an integer ≥ 1, got ${describe(ttl)}`)
        if (!isVersion(floor)) throw badNumber(floor, `redisL2.leases.readOrAcquire: floor must be an integer in [0, ${MAX_VERSION}], got ${describe(floor)}`)
        const base = l2Key(prefix, table, id)
        const reply = await run(base, (s) => s.echostoreL2ReadOrLeaseBuffer(generationKey(prefix, table, id), base, leaseKey(prefix, table, id), maxValueBytes + HEADER_SCAN, token, ttl, floor))
        const lease = reply[4] === LEASE_STATUS.taken ? 'taken' : reply[4] === LEASE_STATUS.busy ? 'busy' : 'unasked'
        let entry: L2Entry | undefined
        try {
          entry = entryOf(table, id, reply.slice(0, 4) as GetReply)
        } catch {
          entry = undefined // what get would reject: no fill
        }
        return { entry, lease }
      },
    },

    close(): Promise<void> {
      closing ??= connection.close()
      return closing
    },
  }
}
