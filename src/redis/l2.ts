import { CONNECTION_OPTIONS, openConnection, validateConnection, type NodeRedisClient, type RedisClient, type RedisConnectionOptions } from './connection.js'
import { MAX_TIMER_MS } from '../core/clock.js'
import { readOptions } from '../table/read-options.js'
import { keyOf, script, type Call, type Driver } from './driver.js'
import { L2ClosedError, L2CorruptEntryError, L2UnfitValueError, RedisUnreachableError, badArgument, badNumber, describe } from '../core/errors.js'
import type { Id } from '../core/id.js'
import { MAX_VERSION, isVersion } from '../core/versions.js'
import { jsonCodec, type Codec } from '../l2/codec.js'
import { BUCKETS, LONGEST_ENTRY_MS, TAG_TTL_MS, bucketGenerationKey, generationKey, inGeneration, l2Key, leaseKey, tagVersionKey, unfitPrefix, VERSION_TTL_MS, versionKey } from '../l2/keys.js'
import { HEADER_SCAN, decodeEntry, encodeEntry, isKind } from './entry.js'
import { CLEAR_LUA, GET_LUA, GET_STATUS, INVALIDATE_TAG_LUA, LEASE_STATUS, NEXT_VERSION_LUA, READ_OR_LEASE_LUA, RELEASE_LEASE_LUA, SET_AND_RELEASE_LUA, SET_LUA } from './scripts.js'
import { redisLeases } from './leases.js'
import { DEFAULT_L2_TIMEOUT, type L2Entry, type L2Store, type L2Write, type LeaseRead } from '../l2/store.js'

/** A client the store can use: an ioredis single-node (or Sentinel) or cluster client, or a node-redis client of any kind. */
export type RedisL2Client = RedisClient | NodeRedisClient

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
   * from the end of the event-loop turn that made the call (node-redis writes a turn's commands only
   * then; the adapter sets no timers). Default: none here, so the table uses `DEFAULT_L2_TIMEOUT` (50 ms).
   * It bounds `close()` too: the connections the store opened (a `url`, `sentinels`) are quit
   * gracefully for at most this long (`DEFAULT_L2_TIMEOUT` when absent), then dropped at once.
   */
  timeout?: number
  /**
   * Largest encoded value, in bytes, the store writes or decodes; a larger one is never written (the
   * table counts `l2_oversize` and answers from the loader) and a larger entry found is never read
   * across the wire, so decoding it cannot hold the event loop. Default {@link DEFAULT_MAX_VALUE_BYTES} (1 MiB).
   */
  maxValueBytes?: number
}

/** The options {@link redisL2} knows; any other key is refused (a typo would otherwise take a default silently). */
const REDIS_L2_OPTIONS = [...CONNECTION_OPTIONS, 'prefix', 'codec', 'timeout', 'maxValueBytes'] as const

/** The scripts of the L2 and its leases, as every driver runs them (`EVALSHA`, `EVAL` on `NOSCRIPT`). */
export const SCRIPTS = {
  get: script('echostoreL2Get', GET_LUA, 2),
  set: script('echostoreL2Set', SET_LUA, 2),
  nextVersion: script('echostoreL2NextVersion', NEXT_VERSION_LUA, 3),
  clear: script('echostoreL2Clear', CLEAR_LUA, 1),
  invalidateTag: script('echostoreL2InvalidateTag', INVALIDATE_TAG_LUA, 1),
  releaseLease: script('echostoreL2ReleaseLease', RELEASE_LEASE_LUA, 1),
  readOrLease: script('echostoreL2ReadOrLease', READ_OR_LEASE_LUA, 3),
  setAndRelease: script('echostoreL2SetAndRelease', SET_AND_RELEASE_LUA, 3),
} as const

/** What {@link GET_LUA} answers (see `scripts.ts`). */
type GetReply = [number, Buffer | null, number, number] | [number] | null

/**
 * How many times one call asks again because its bucket's generation moved under it (a clear made
 * between each ask and the next); past that it fails, as a call that did not answer.
 */
const MOST_MOVES = 3

/** How many buckets' generations a store remembers (64 tables cleared in every bucket); past that it forgets them all and learns them again. */
const GENERATIONS_KEPT = 64 * BUCKETS

/** The generation a script answered its bucket is in, when it is not the one the call named its keys for (see `MOVED_FROM` in `scripts.ts`). */
function movedTo(reply: unknown): number | undefined {
  return Array.isArray(reply) && Number(reply[0]) === GET_STATUS.moved ? Number(reply[3]) : undefined
}

/** Whether a write script answered 1, written (an integer, or its text from a client that maps integers to strings). */
function written(reply: unknown): boolean {
  return Number(reply) === 1
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
    throw badArgument(
      TypeError,
      `redisL2: the option \`prefix\` (with the client's own keyPrefix ${describe(keyPrefixOf(client))} before it) would break Redis Cluster slot hashing: ${unfit}; got ${describe(prefix)}`,
    )
  }
  if (codec !== undefined && (typeof codec?.encode !== 'function' || typeof codec?.decode !== 'function')) {
    throw badArgument(TypeError, `redisL2: the option \`codec\` must have encode and decode functions, got ${describe(codec)}`)
  }
  if (timeout !== undefined && !(typeof timeout === 'number' && timeout >= 1 && timeout <= MAX_TIMER_MS)) {
    throw badNumber(timeout, `redisL2: the option \`timeout\` must be a number of ms in [1, ${MAX_TIMER_MS}] (the longest a Node timer honours), got ${describe(timeout)}`)
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

/** The largest string Redis holds (512 MiB), less room for the header. */
const MAX_REDIS_STRING = 512 * 1024 * 1024 - HEADER_SCAN

/**
 * An L2 on Redis through ioredis or node-redis: one node, a Cluster, or a Sentinel set. Each entry is one string
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
 * the past, and a get or set is one command on one node. A script touches only the keys it is
 * given: a call names the entry key of the generation its bucket was last seen in, and asks again
 * when the script answers another (see `inBucket`), so a Cluster slot migration refuses a call whose
 * keys it has split rather than running it beside a key already moved.
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
 * The adapter does I/O only: no timeouts or fallback (the table's facade owns them). It reaches
 * Redis through a driver (`driver.ts`: ioredis or node-redis, the same keys and bytes either way),
 * which runs the scripts (`SCRIPTS`) by `EVALSHA`, `EVAL` on `NOSCRIPT`; leases are in
 * `leases.ts`. A client's own `keyPrefix`, if any, goes before `prefix`.
 */
export function redisL2(given: RedisL2Options): RedisL2 {
  const options = readOptions(given, REDIS_L2_OPTIONS, 'redisL2') as RedisL2Options
  validate(options)
  const { prefix = 'echostore:', codec = jsonCodec, maxValueBytes = DEFAULT_MAX_VALUE_BYTES } = options
  // close() waits for a graceful quit of the connections it opened no longer than one call may take.
  const connection = openConnection('redisL2', options, options.timeout ?? DEFAULT_L2_TIMEOUT)
  let closing: Promise<void> | undefined
  /**
   * The generation each bucket was last seen in, by its generation key, for buckets past 0: the
   * guess every call names its entry key with, which its script checks (a wrong guess costs one more
   * round trip). Written only by {@link learn}, from what the scripts and `clear` answer.
   */
  const generations = new Map<string, number>()

  /** Takes note that the bucket of `key` is in `generation`. */
  function learn(key: string, generation: number): void {
    if (generation === 0) generations.delete(key)
    else {
      if (generations.size >= GENERATIONS_KEPT && !generations.has(key)) generations.clear()
      generations.set(key, generation)
    }
  }

  /** The client's driver; while a url has not answered yet, rejects once it was first asked (fail fast: never wait for a node that does not answer). */
  function driverOf(): Driver | Promise<Driver> {
    const driver = connection.current()
    if (driver !== undefined) return driver
    return connection.asked.then(() => {
      const known = connection.current()
      if (known === undefined) throw new RedisUnreachableError('redisL2', connection.where, 'does not answer', { cause: connection.cause() })
      return known
    })
  }

  /** The master serving `key` (`host:port`) on a cluster whose slot map is known; undefined elsewhere. */
  function nodeOf(key: string): string | undefined {
    return connection.current()?.masterOf(key)
  }

  /** A connection failure as `RedisUnreachableError` carrying the node's outage; a reply (or one already converted) as it is. */
  function unreachable(key: string, error: unknown, driver: Driver | undefined): unknown {
    if (error instanceof RedisUnreachableError || driver?.isReply(error) === true) return error
    const node = nodeOf(key)
    return new RedisUnreachableError('redisL2', node ?? connection.where, 'did not answer', { cause: connection.cause(node) ?? error })
  }

  /** Runs one call on the node serving its key; a connection failure rejects with `RedisUnreachableError` carrying the node's outage. */
  async function run(call: Call): Promise<unknown> {
    let driver: Driver | undefined
    try {
      const known = driverOf()
      driver = known instanceof Promise ? await known : known
      return await driver.run(call)
    } catch (error) {
      throw unreachable(keyOf(call), error, driver)
    }
  }

  /**
   * Runs `calls` in one round trip per node (see {@link Driver.runMany}). Answers the replies in
   * their order; a call that failed fails the whole, as `run` would.
   */
  async function runMany(calls: readonly Call[]): Promise<unknown[]> {
    let driver: Driver | undefined
    try {
      const known = driverOf()
      driver = known instanceof Promise ? await known : known
      const answers = await driver.runMany(calls)
      return answers.map((answer, i) => {
        if ('error' in answer) throw unreachable(keyOf(calls[i]!), answer.error, driver)
        return answer.reply
      })
    } catch (error) {
      throw unreachable(keyOf(calls[0]!), error, driver)
    }
  }

  /**
   * Runs the call `build` makes with the keys of (table, id), in the generation its bucket was last
   * seen in, and asks again in the one its script answers while the bucket has moved on (a clear,
   * here or elsewhere): at most {@link MOST_MOVES} times more. `build` is given the bucket's
   * generation key, the entry's key in the generation guessed, and that generation.
   */
  async function inBucket(op: string, table: string, id: Id, build: (generationKey: string, key: string, generation: number) => Call): Promise<unknown> {
    const base = l2Key(prefix, table, id)
    const genKey = generationKey(prefix, table, id)
    for (let asked = 0; asked <= MOST_MOVES; asked++) {
      const generation = generations.get(genKey) ?? 0
      const reply = await run(build(genKey, inGeneration(base, generation), generation))
      const moved = movedTo(reply)
      if (moved === undefined) return reply
      learn(genKey, moved)
    }
    throw movedTooOften(op, table, id)
  }

  function movedTooOften(op: string, table: string, id: Id): Error {
    return new Error(
      `echostore: redisL2.${op}: the bucket of id ${describe(id)} of table ${describe(table)} was cleared ${MOST_MOVES + 1} times while the call asked; it failed as one that did not answer`,
    )
  }

  /** The call `get` makes for an entry key of generation `generation`: {@link GET_LUA}, the entry's bytes as a Buffer. */
  function getCall(genKey: string, key: string, generation: number): Call {
    return { script: SCRIPTS.get, keys: [genKey, key], args: [maxValueBytes + HEADER_SCAN, generation], buffers: true }
  }

  /** The entry of (table, id) in a reply of {@link GET_LUA}; rejects as `get` does for what cannot be read. */
  function entryOf(table: string, id: Id, reply: GetReply): L2Entry | undefined {
    if (reply === null) return undefined
    // Integers as a client maps them (ioredis's `stringNumbers` makes them strings): read as numbers.
    const [status, ttl, generation] = [Number(reply[0]), reply[2] === undefined ? undefined : Number(reply[2]), reply[3] === undefined ? undefined : Number(reply[3])]
    const data = reply[1]
    if (status === GET_STATUS.badGeneration) throw new L2CorruptEntryError(generationKey(prefix, table, id), 'the generation key holds garbage; table.clear() repairs it')
    const key = inGeneration(l2Key(prefix, table, id), generation ?? 0)
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
      const driver = connection.current()
      // Before a url's node answered: the host:port it names (a cluster, once detected, has none).
      if (driver === undefined) return typeof options.url === 'string' ? connection.where : undefined
      return driver.address()
    },
    /** `await using` support: the same as `close()`. */
    [Symbol.asyncDispose](): Promise<void> {
      return this.close()
    },

    async get(table: string, id: Id): Promise<L2Entry | undefined> {
      open('get')
      return entryOf(table, id, (await inBucket('get', table, id, getCall)) as GetReply)
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
      const genKeys = ids.map((id) => generationKey(prefix, table, id))
      const replies: unknown[] = []
      // Every id at first, then the ids whose bucket had moved on, in the generation answered.
      let asking = ids.map((_, i) => i)
      for (let asked = 0; asking.length > 0; asked++) {
        if (asked > MOST_MOVES) throw movedTooOften('getMany', table, ids[asking[0]!]!)
        const guesses = asking.map((i) => generations.get(genKeys[i]!) ?? 0)
        const answers = await runMany(asking.map((i, n) => getCall(genKeys[i]!, inGeneration(bases[i]!, guesses[n]!), guesses[n]!)))
        const moved: number[] = []
        answers.forEach((answer, n) => {
          const i = asking[n]!
          const generation = movedTo(answer)
          if (generation === undefined) replies[i] = answer
          else {
            learn(genKeys[i]!, generation)
            moved.push(i)
          }
        })
        asking = moved
      }
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
      const data = encodeEntry(l2Key(prefix, table, id), entry, codec, maxValueBytes)
      const lifetime = entry.ttl + (entry.grace ?? 0)
      return written(await inBucket('set', table, id, (genKey, key, generation) => ({ script: SCRIPTS.set, keys: [genKey, key], args: [entry.version, lifetime, data, generation] })))
    },

    async nextVersion(table: string, id: Id, floor: number): Promise<number> {
      open('nextVersion')
      if (!isVersion(floor)) throw badNumber(floor, `redisL2.nextVersion: floor must be an integer in [0, ${MAX_VERSION}], got ${describe(floor)}`)
      const counter = versionKey(prefix, table, id)
      return Number(await inBucket('nextVersion', table, id, (genKey, key, generation) => ({ script: SCRIPTS.nextVersion, keys: [counter, genKey, key], args: [VERSION_TTL_MS, floor, generation] })))
    },

    async clear(table: string): Promise<void> {
      open('clear')
      const keys = Array.from({ length: BUCKETS }, (_, bucket) => bucketGenerationKey(prefix, table, bucket))
      await Promise.all(keys.map(async (key) => learn(key, Number(await run({ script: SCRIPTS.clear, keys: [key], args: [LONGEST_ENTRY_MS] })))))
    },

    async tagVersions(table: string, tags: readonly string[]): Promise<number[]> {
      open('tagVersions')
      checkTags('tagVersions', tags)
      return Promise.all(
        tags.map(async (tag) => {
          const key = tagVersionKey(prefix, table, tag)
          return tagVersionOf((await run({ command: 'GET', key, args: [] })) as string | null)
        }),
      )
    },

    async invalidateTags(table: string, tags: readonly string[], floor: number): Promise<number[]> {
      open('invalidateTags')
      checkTags('invalidateTags', tags)
      if (!isVersion(floor)) throw badNumber(floor, `redisL2.invalidateTags: floor must be an integer in [0, ${MAX_VERSION}], got ${describe(floor)}`)
      return Promise.all(
        tags.map(async (tag) => {
          const key = tagVersionKey(prefix, table, tag)
          return Number(await run({ script: SCRIPTS.invalidateTag, keys: [key], args: [floor, TAG_TTL_MS] }))
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
      ...redisLeases(run, runMany, SCRIPTS.releaseLease, prefix, open),
      /** One script: the write of `set`, then the compare-and-delete of `release`. */
      async setAndRelease(table: string, id: Id, entry: L2Write, token: string): Promise<boolean> {
        open('leases.setAndRelease')
        checkWrite(entry)
        if (typeof token !== 'string' || token === '') throw badArgument(TypeError, `redisL2.leases.setAndRelease: token must be a non-empty string, got ${describe(token)}`)
        const data = encodeEntry(l2Key(prefix, table, id), entry, codec, maxValueBytes)
        const lifetime = entry.ttl + (entry.grace ?? 0)
        const leaseAt = leaseKey(prefix, table, id)
        const reply = await inBucket('leases.setAndRelease', table, id, (genKey, key, generation) => ({
          script: SCRIPTS.setAndRelease,
          keys: [genKey, key, leaseAt],
          args: [entry.version, lifetime, data, token, generation],
        }))
        return written(reply)
      },
      /** One script: the read of `get` and, when it finds no fill, the `SET NX PX` of `acquire`. */
      async readOrAcquire(table: string, id: Id, token: string, ttl: number, floor: number): Promise<LeaseRead> {
        open('leases.readOrAcquire')
        if (typeof token !== 'string' || token === '') throw badArgument(TypeError, `redisL2.leases.readOrAcquire: token must be a non-empty string, got ${describe(token)}`)
        if (!(Number.isSafeInteger(ttl) && ttl >= 1)) throw badNumber(ttl, `redisL2.leases.readOrAcquire: ttl must be an integer ≥ 1, got ${describe(ttl)}`)
        if (!isVersion(floor)) throw badNumber(floor, `redisL2.leases.readOrAcquire: floor must be an integer in [0, ${MAX_VERSION}], got ${describe(floor)}`)
        const leaseAt = leaseKey(prefix, table, id)
        const reply = (await inBucket('leases.readOrAcquire', table, id, (genKey, key, generation) => ({
          script: SCRIPTS.readOrLease,
          keys: [genKey, key, leaseAt],
          args: [maxValueBytes + HEADER_SCAN, token, ttl, floor, generation],
          buffers: true,
        }))) as [number, Buffer | null, number, number, number]
        const asked = Number(reply[4])
        const lease = asked === LEASE_STATUS.taken ? 'taken' : asked === LEASE_STATUS.busy ? 'busy' : 'unasked'
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
