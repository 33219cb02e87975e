/**
 * The Lua scripts of the Redis L2, each atomic on the keys of one (table, id) (one Cluster slot), or
 * on one table's generation key.
 * A key that holds garbage (another type, a header that does not parse, a version out of range) is
 * that key's problem: reads report it, writes and mints replace it; it never fails a call.
 */
import { MAX_VERSION } from '../core/versions.js'
import { HEADER_SCAN } from './entry.js'

/** The held entry's version from its header (`v7:`, or `v7+5000:` when written with grace), or nil when the key holds no readable one (any type is safe to ask). */
const HELD_VERSION = `
local function held_version(key)
  if redis.call('TYPE', key).ok ~= 'string' then return nil end
  local held = tonumber(string.match(redis.call('GETRANGE', key, 0, ${HEADER_SCAN - 1}), '^[vat](%d+)[+:]') or '')
  if held and held <= ${MAX_VERSION} then return held end
  return nil
end
`

/** What {@link GET_LUA} answers in its first field. */
export const GET_STATUS = { found: 0, wrongType: 1, tooLarge: 2 } as const

/**
 * Reads the entry under KEYS[1] with its remaining lifetime, in one step: `nil` when there is none;
 * else `{status, payload, pttl}`: the payload when it is a string of at most ARGV[1] bytes, only the
 * status when it is another type or larger (so a huge entry never crosses the wire).
 */
export const GET_LUA = `
local kind = redis.call('TYPE', KEYS[1]).ok
if kind == 'none' then return false end
if kind ~= 'string' then return {${GET_STATUS.wrongType}} end
if redis.call('STRLEN', KEYS[1]) > tonumber(ARGV[1]) then return {${GET_STATUS.tooLarge}} end
return {${GET_STATUS.found}, redis.call('GET', KEYS[1]), redis.call('PTTL', KEYS[1])}
`

/** Writes ARGV[3] under KEYS[1] with `PX ARGV[2]` unless the held entry's version is strictly above ARGV[1]; garbage is overwritten. */
export const SET_LUA = `${HELD_VERSION}
local held = held_version(KEYS[1])
if held and held > tonumber(ARGV[1]) then return 0 end
redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[2])
return 1
`

/**
 * Mints the next version of one (table, id): the largest of 1, ARGV[2] (the caller's floor), the last
 * version minted (the version key KEYS[1]) + 1 and the held entry's (KEYS[2]) version + 1; records
 * it in the version key for ARGV[1] ms and returns it. A version key that holds garbage is replaced.
 */
export const NEXT_VERSION_LUA = `${HELD_VERSION}
local version = math.max(tonumber(ARGV[2]), 1)
if redis.call('TYPE', KEYS[1]).ok == 'string' then
  local issued = tonumber(redis.call('GET', KEYS[1]))
  if issued and issued >= 0 and issued < ${MAX_VERSION} and issued + 1 > version then version = issued + 1 end
end
local held = held_version(KEYS[2])
if held and held < ${MAX_VERSION} and held + 1 > version then version = held + 1 end
redis.call('SET', KEYS[1], string.format('%.0f', version), 'PX', ARGV[1])
return version
`

/** The generation held under `key`, or -1 when it holds garbage (another type, not an integer in range); 0 when there is none. */
const READ_GENERATION = `
local function read_generation(key)
  local kind = redis.call('TYPE', key).ok
  if kind == 'none' then return 0 end
  if kind ~= 'string' then return -1 end
  local generation = tonumber(redis.call('GET', key))
  if generation and generation >= 0 and generation < ${MAX_VERSION} and generation == math.floor(generation) then return generation end
  return -1
end
`

/** A table's generation from its generation key KEYS[1]: 0 when never cleared, -1 when the key holds garbage. */
export const GENERATION_LUA = `${READ_GENERATION}
return read_generation(KEYS[1])
`

/**
 * Clears a table: moves its generation key KEYS[1] one past the generation held, or past ARGV[1]
 * (the caller's known generation) when the key holds garbage, and returns the new generation.
 */
export const CLEAR_LUA = `${READ_GENERATION}
local generation = read_generation(KEYS[1])
if generation < 0 then generation = tonumber(ARGV[1]) end
generation = generation + 1
redis.call('SET', KEYS[1], string.format('%.0f', generation))
return generation
`

/** Releases the lease under KEYS[1] if ARGV[1] (the holder's token) still holds it: 1 when released, 0 otherwise. */
export const RELEASE_LEASE_LUA = `
if redis.call('TYPE', KEYS[1]).ok == 'string' and redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
`
