import type { Cluster, Redis } from 'ioredis'
import { ioredis } from '../ioredis.js'
import { FAIL_FAST } from '../redis-connection.js'
import { L2ClosedError, L2CorruptEntryError, badArgument, badNumber, describe } from '../errors.js'
import type { Id } from '../id.js'
import { jsonCodec, type Codec } from './codec.js'
import { l2Key, VERSION_TTL_MS, versionKey } from './keys.js'
import type { L2Entry, L2Kind, L2Store, L2Write } from './store.js'

/** An ioredis client the store can use: a single-node client or a cluster client. */
export type RedisL2Client = Redis | Cluster

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
}

/**
 * Entry layout: one string key per entry, `<kind><version>:` then the codec payload. The kind is one
 * letter (`v` value, `a` absent, `t` tombstone), the version is decimal, and absent and tombstone
 * entries carry no payload. The header is ASCII and never longer than 18 bytes (a safe integer has at
 * most 16 digits); the scripts read only its first 32 bytes.
 */
const KIND_LETTER: Record<L2Kind, string> = { value: 'v', absent: 'a', tombstone: 't' }
const LETTER_KIND: Record<string, L2Kind | undefined> = { v: 'value', a: 'absent', t: 'tombstone' }
const HEADER = /^([vat])(\d{1,16}):/
const HEADER_SCAN = 32

/** Reads the entry and its remaining lifetime in one step: `nil`, or `{payload, pttl}`. */
const GET_LUA = `
local payload = redis.call('GET', KEYS[1])
if not payload then return false end
return {payload, redis.call('PTTL', KEYS[1])}
`

/** Writes ARGV[3] with `PX ARGV[2]` unless the held entry's version is strictly above ARGV[1]. */
const SET_LUA = `
local held = string.match(redis.call('GETRANGE', KEYS[1], 0, ${HEADER_SCAN - 1}), '^[vat](%d+):')
if held and tonumber(held) > tonumber(ARGV[1]) then return 0 end
redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[2])
return 1
`

/**
 * INCRs the version key (KEYS[1]) but never answers less than the data entry's (KEYS[2]) version + 1,
 * then renews the version key's lifetime to ARGV[1] ms.
 */
const NEXT_VERSION_LUA = `
local version = redis.call('INCR', KEYS[1])
local held = string.match(redis.call('GETRANGE', KEYS[2], 0, ${HEADER_SCAN - 1}), '^[vat](%d+):')
if held and version <= tonumber(held) then
  version = tonumber(held) + 1
  redis.call('SET', KEYS[1], string.format('%.0f', version))
end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return version
`

/** The commands `defineCommand` installs on the client (ioredis loads them with EVALSHA, EVAL on NOSCRIPT). */
interface Scripts {
  echostoreL2GetBuffer(key: string): Promise<[Buffer, number] | null>
  echostoreL2Set(key: string, version: number, ttl: number, data: Buffer): Promise<number>
  echostoreL2NextVersion(versionKey: string, dataKey: string, versionTtl: number): Promise<number>
}

function checkWrite(entry: L2Write): void {
  if (!Object.hasOwn(KIND_LETTER, entry.kind)) throw badArgument(TypeError, `redisL2.set: kind must be 'value', 'absent' or 'tombstone', got ${describe(entry.kind)}`)
  if (!Number.isSafeInteger(entry.version) || entry.version < 0) throw badNumber(entry.version, `redisL2.set: version must be a safe integer ≥ 0, got ${describe(entry.version)}`)
  if (!Number.isSafeInteger(entry.ttl) || entry.ttl < 1) throw badNumber(entry.ttl, `redisL2.set: ttl must be an integer ≥ 1, got ${describe(entry.ttl)}`)
}

function encodeEntry(entry: L2Write, codec: Codec): Buffer {
  const header = Buffer.from(`${KIND_LETTER[entry.kind]}${entry.version}:`, 'latin1')
  if (entry.kind !== 'value') return header
  const payload = codec.encode(entry.value)
  return Buffer.concat([header, typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload])
}

function decodeEntry(key: string, data: Buffer, ttl: number, codec: Codec): L2Entry {
  const match = HEADER.exec(data.subarray(0, HEADER_SCAN).toString('latin1'))
  const kind = match && LETTER_KIND[match[1]!]
  if (!match || !kind) throw new L2CorruptEntryError(key, 'no entry header')
  const version = Number(match[2])
  if (kind !== 'value') return { kind, version, ttl }
  let value: unknown
  try {
    value = codec.decode(data.subarray(match[0].length))
  } catch (error) {
    throw new L2CorruptEntryError(key, error instanceof Error ? error.message : String(error))
  }
  return { kind, value, version, ttl }
}

function validate(options: RedisL2Options): void {
  const { client, url, prefix, codec, timeout } = options
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
}

/**
 * An L2 on Redis through ioredis. Each entry is one string key (see `l2Key` for the layout) written
 * by a script that refuses only a strictly lower version than the one held, with `PX ttl`; `get`
 * reads the entry and its `PTTL` atomically and answers the remaining lifetime. `nextVersion` INCRs a
 * per-(table, id) version key, never answering less than the held entry's version + 1; the version
 * key lives `VERSION_TTL_MS` (7 days) after its last use. An entry that cannot be decoded, holds
 * poisoned JSON or has no expiry makes `get` reject with `L2CorruptEntryError`.
 *
 * The adapter does I/O only: no timeouts, retries or fallback (the table's facade owns them). The
 * scripts are installed on the client with `defineCommand` (`echostoreL2Get`, `echostoreL2Set`,
 * `echostoreL2NextVersion`). A client's own `keyPrefix`, if any, goes before `prefix`.
 */
export function redisL2(options: RedisL2Options): L2Store {
  validate(options)
  const { prefix = 'echostore:', codec = jsonCodec } = options
  const owned = options.client === undefined
  const client: RedisL2Client = options.client ?? new ioredis.Redis(options.url!, FAIL_FAST)
  // An outage must never crash the process: the failure reaches the caller through the rejected command.
  if (owned) client.on('error', () => {})
  client.defineCommand('echostoreL2Get', { lua: GET_LUA, numberOfKeys: 1 })
  client.defineCommand('echostoreL2Set', { lua: SET_LUA, numberOfKeys: 1 })
  client.defineCommand('echostoreL2NextVersion', { lua: NEXT_VERSION_LUA, numberOfKeys: 2 })
  const scripts = client as unknown as Scripts
  let closing: Promise<void> | undefined

  function open(op: string): void {
    if (closing !== undefined) throw new L2ClosedError('redisL2', op)
  }

  return {
    ...(options.timeout === undefined ? {} : { timeout: options.timeout }),

    async get(table: string, id: Id): Promise<L2Entry | undefined> {
      open('get')
      const key = l2Key(prefix, table, id)
      const reply = await scripts.echostoreL2GetBuffer(key)
      if (reply === null) return undefined
      const [data, ttl] = reply
      if (ttl === -1) throw new L2CorruptEntryError(key, 'the key has no expiry')
      if (ttl <= 0) return undefined
      return decodeEntry(key, data, ttl, codec)
    },

    async set(table: string, id: Id, entry: L2Write): Promise<boolean> {
      open('set')
      checkWrite(entry)
      const written = await scripts.echostoreL2Set(l2Key(prefix, table, id), entry.version, entry.ttl, encodeEntry(entry, codec))
      return written === 1
    },

    async nextVersion(table: string, id: Id): Promise<number> {
      open('nextVersion')
      return scripts.echostoreL2NextVersion(versionKey(prefix, table, id), l2Key(prefix, table, id), VERSION_TTL_MS)
    },

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
