import type { Cluster, Redis } from 'ioredis'
import { ioredis } from './ioredis.js'
import { FAIL_FAST } from './connection.js'
import { addressOf } from './address.js'
import { L2ClosedError, L2CorruptEntryError, L2UnfitValueError, badArgument, badNumber, describe } from '../core/errors.js'
import type { Id } from '../core/id.js'
import { MAX_VERSION, isVersion } from '../core/versions.js'
import { jsonCodec, type Codec } from '../l2/codec.js'
import { entryKey, generationKey, VERSION_TTL_MS, versionKey } from '../l2/keys.js'
import { HEADER_SCAN, decodeEntry, encodeEntry, isKind } from './entry.js'
import { CLEAR_LUA, GENERATION_LUA, GET_LUA, GET_STATUS, NEXT_VERSION_LUA, SET_LUA } from './scripts.js'
import { redisLeases } from './leases.js'
import type { L2Entry, L2Store, L2Write } from '../l2/store.js'

/** An ioredis client the store can use: a single-node client or a cluster client. */
export type RedisL2Client = Redis | Cluster

/** The Redis L2 store: an {@link L2Store} that also supports `await using`. */
export interface RedisL2 extends L2Store {
  /** `await using` support: the same as `close()`. */
  [Symbol.asyncDispose](): Promise<void>
}

/** Options of {@link redisL2}: exactly one of `client` and `url`. */
export interface RedisL2Options {
  /** An existing ioredis `Redis` or `Cluster` client. The store never closes it. */
  client?: RedisL2Client
  /** A Redis URL (`redis://host:port/db`); the store opens its own connection and closes it in `close()`. */
  url?: string
  /** Written verbatim before every key (a tenant, an environment). Default `'echostore:'`. */
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
  echostoreL2GetBuffer(key: string, maxBytes: number): Promise<[number, Buffer?, number?] | null>
  echostoreL2Set(key: string, version: number, ttl: number, data: Buffer): Promise<number>
  echostoreL2NextVersion(versionKey: string, dataKey: string, versionTtl: number, floor: number): Promise<number>
  echostoreL2Generation(generationKey: string): Promise<number>
  echostoreL2Clear(generationKey: string, known: number): Promise<number>
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
  const { client, url, prefix, codec, timeout, maxValueBytes } = options
  if ((client === undefined) === (url === undefined)) {
    throw badArgument(TypeError, `redisL2: pass exactly one of the options \`client\` and \`url\`, got ${client === undefined ? 'neither' : 'both'}`)
  }
  if (client !== undefined && typeof (client as Partial<RedisL2Client> | null)?.defineCommand !== 'function') {
    throw badArgument(TypeError, `redisL2: the option \`client\` must be an ioredis Redis or Cluster client, got ${describe(client)}`)
  }
  if (url !== undefined && (typeof url !== 'string' || url === '')) {
    throw badArgument(TypeError, `redisL2: the option \`url\` must be a non-empty string, got ${describe(url)}`)
  }
  if (prefix !== undefined && (typeof prefix !== 'string' || Buffer.from(prefix, 'utf8').toString('utf8') !== prefix)) {
    throw badArgument(TypeError, `redisL2: the option \`prefix\` must be a string without lone surrogates (keys are UTF-8), got ${describe(prefix)}`)
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

/** The largest string Redis holds (512 MiB), less room for the header. */
const MAX_REDIS_STRING = 512 * 1024 * 1024 - HEADER_SCAN

/**
 * An L2 on Redis through ioredis. Each entry is one string key (see `l2Key` for the key, and
 * `entry.ts` for the bytes) written by a script that refuses only a strictly higher version
 * than the one held, with `PX ttl`; `get` reads the entry and its `PTTL` atomically and answers the
 * remaining lifetime. `nextVersion` mints the next version in a per-(table, id) version key (see
 * `scripts.ts`), which lives `VERSION_TTL_MS` (7 days) after its last use. An entry that
 * cannot be decoded, holds poisoned JSON, another Redis type, or has no expiry makes `get` reject
 * with `L2CorruptEntryError`; one larger than `maxValueBytes` with `L2UnfitValueError`; the next
 * write replaces either.
 *
 * `clear(table)` bumps the table's generation key; entries live under keys of their generation
 * (see `entryKey`), so the old ones are never read again and expire on their own. Each `get` and
 * `set` reads the generation alongside (two commands sent together, one round trip): when it moved
 * since this adapter last saw it, the call is made again in the new generation, so a process that
 * missed a clear never reads an entry from before it, nor writes into the past.
 *
 * The adapter does I/O only: no timeouts or fallback (the table's facade owns them). The
 * scripts are installed on the client with `defineCommand` (`echostoreL2Get`, `echostoreL2Set`,
 * `echostoreL2NextVersion`, `echostoreL2Generation`, `echostoreL2Clear`, `echostoreL2ReleaseLease`);
 * leases are in `leases.ts`. A client's own
 * `keyPrefix`, if any, goes before `prefix`.
 */
export function redisL2(options: RedisL2Options): RedisL2 {
  validate(options)
  const { prefix = 'echostore:', codec = jsonCodec, maxValueBytes = DEFAULT_MAX_VALUE_BYTES } = options
  const owned = options.client === undefined
  const client: RedisL2Client = options.client ?? new ioredis.Redis(options.url!, FAIL_FAST)
  // An outage must never crash the process: the failure reaches the caller through the rejected command.
  if (owned) client.on('error', () => {})
  client.defineCommand('echostoreL2Get', { lua: GET_LUA, numberOfKeys: 1 })
  client.defineCommand('echostoreL2Set', { lua: SET_LUA, numberOfKeys: 1 })
  client.defineCommand('echostoreL2NextVersion', { lua: NEXT_VERSION_LUA, numberOfKeys: 2 })
  client.defineCommand('echostoreL2Generation', { lua: GENERATION_LUA, numberOfKeys: 1 })
  client.defineCommand('echostoreL2Clear', { lua: CLEAR_LUA, numberOfKeys: 1 })
  const scripts = client as unknown as Scripts
  /** The generation each table had when this adapter last read or bumped it: written only here, from the store's answers. */
  const generations = new Map<string, number>()
  let closing: Promise<void> | undefined

  /** The table's generation now; rejects with `L2CorruptEntryError` when its key holds garbage (a clear repairs it). */
  async function generation(table: string): Promise<number> {
    const key = generationKey(prefix, table)
    const current = await scripts.echostoreL2Generation(key)
    if (current < 0) throw new L2CorruptEntryError(key, 'the generation key holds garbage; table.clear() repairs it')
    return current
  }

  /** Runs `call` in the generation this adapter knows, reading the current one alongside; runs it again when the generation moved. */
  async function inGeneration<T>(table: string, call: (generation: number) => Promise<T>, onGarbage: 'reject' | 'ignore'): Promise<T> {
    const known = generations.get(table) ?? 0
    const reading = generation(table)
    const [answer, current] = await Promise.all([call(known), onGarbage === 'reject' ? reading : reading.catch(() => known)])
    if (current === known) return answer
    generations.set(table, current)
    return call(current)
  }

  /** The raw entry under (table, id) in `generation`. */
  function readEntry(table: string, id: Id, generation: number) {
    const key = entryKey(prefix, table, id, generation)
    return scripts.echostoreL2GetBuffer(key, maxValueBytes + HEADER_SCAN).then((reply) => ({ key, reply }))
  }

  function open(op: string): void {
    if (closing !== undefined) throw new L2ClosedError('redisL2', op)
  }

  return {
    ...(options.timeout === undefined ? {} : { timeout: options.timeout }),
    address: addressOf(client),
    /** `await using` support: the same as `close()`. */
    [Symbol.asyncDispose](): Promise<void> {
      return this.close()
    },

    async get(table: string, id: Id): Promise<L2Entry | undefined> {
      open('get')
      const { key, reply } = await inGeneration(table, (generation) => readEntry(table, id, generation), 'reject')
      if (reply === null) return undefined
      const [status, data, ttl] = reply
      if (status === GET_STATUS.wrongType) throw new L2CorruptEntryError(key, 'the key holds another Redis type')
      if (status === GET_STATUS.tooLarge) throw new L2UnfitValueError(key, 'size', `larger than maxValueBytes ${maxValueBytes}`)
      if (ttl === -1) throw new L2CorruptEntryError(key, 'the key has no expiry')
      if (ttl === undefined || ttl <= 0 || data === undefined) return undefined
      return decodeEntry(key, data, ttl, codec)
    },

    async set(table: string, id: Id, entry: L2Write): Promise<boolean> {
      open('set')
      checkWrite(entry)
      const data = encodeEntry(entryKey(prefix, table, id, generations.get(table) ?? 0), entry, codec, maxValueBytes)
      const lifetime = entry.ttl + (entry.grace ?? 0)
      // A garbage generation key fails reads (they report it); a write goes on in the generation known.
      const written = await inGeneration(table, (generation) => scripts.echostoreL2Set(entryKey(prefix, table, id, generation), entry.version, lifetime, data), 'ignore')
      return written === 1
    },

    async nextVersion(table: string, id: Id, floor: number): Promise<number> {
      open('nextVersion')
      if (!isVersion(floor)) throw badNumber(floor, `redisL2.nextVersion: floor must be an integer in [0, ${MAX_VERSION}], got ${describe(floor)}`)
      return scripts.echostoreL2NextVersion(versionKey(prefix, table, id), entryKey(prefix, table, id, generations.get(table) ?? 0), VERSION_TTL_MS, floor)
    },

    async clear(table: string): Promise<void> {
      open('clear')
      generations.set(table, await scripts.echostoreL2Clear(generationKey(prefix, table), generations.get(table) ?? 0))
    },

    leases: redisLeases(client, prefix, open),

    close(): Promise<void> {
      closing ??= owned ? closeOwn(client) : Promise.resolve()
      return closing
    },
  }
}

/** Quits gracefully when connected (pending replies arrive first), else drops the connection at once. */
async function closeOwn(client: RedisL2Client): Promise<void> {
  if (client.status === 'ready') {
    try {
      await client.quit()
      return
    } catch {
      // fall through: the connection went away while quitting
    }
  }
  client.disconnect()
}
