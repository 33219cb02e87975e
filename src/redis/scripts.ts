/**
 * The Lua scripts of the Redis L2, each atomic on the keys of one bucket of a table (one Cluster
 * slot: its ids' keys and the bucket's generation key, see `l2/keys.ts`), and touching only the keys
 * it declares: an entry's key is named by the caller for the generation it expects, and a script
 * finding the bucket in another one answers that generation (see {@link MOVED_FROM}).
 * A key that holds garbage (another type, a header that does not parse, a version out of range) is
 * that key's problem: reads report it, writes and mints replace it; it never fails a call.
 */
import { MAX_VERSION } from '../core/versions.js'
import { HEADER_SCAN } from './entry.js'

/** What {@link GET_LUA} answers in its first field (`moved`: every script answers it when the bucket is in another generation, see {@link MOVED_FROM}). */
export const GET_STATUS = { found: 0, wrongType: 1, tooLarge: 2, badGeneration: 3, moved: 4 } as const

/**
 * The header of an entry, as `readHeader` (`entry.ts`) reads it, and by the same rule: `head` is
 * the entry's first {@link HEADER_SCAN} bytes, `size` its length. Answers its kind letter, version
 * and grace (0 when none), or nil when it is unreadable: no header (`<kind><1-16 digits>`, then
 * `+<1-11 digits>`, then `@<1-16 digits>#<1-9 digits>`, both optional, then `:`), a version or
 * birth above MAX_VERSION, tags past the end of the bytes, or tags on a tombstone.
 */
const READ_HEADER = `
local function read_header(head, size)
  local kind, digits, at = string.match(head, '^([vat])(%d+)()')
  if not kind or #digits > 16 then return nil end
  local version = tonumber(digits)
  if version > ${MAX_VERSION} then return nil end
  local grace = 0
  local grace_digits, after_grace = string.match(head, '^%+(%d+)()', at)
  if grace_digits then
    if #grace_digits > 11 then return nil end
    grace = tonumber(grace_digits)
    at = after_grace
  end
  local born, count, colon = string.match(head, '^@(%d+)#(%d+)():', at)
  if born then
    if #born > 16 or #count > 9 or tonumber(born) > ${MAX_VERSION} or kind == 't' then return nil end
    if colon + tonumber(count) > size then return nil end
    at = colon
  end
  if string.sub(head, at, at) ~= ':' then return nil end
  return kind, version, grace
end
`

/**
 * The held entry's version, or nil when the key holds no readable entry (see `entry.ts`): another
 * type, a header {@link READ_HEADER} refuses, or no expiry. The reader takes each of those for a
 * corrupt miss, so a write must not honour its version: the next write of any version repairs it.
 * `GETRANGE` under `pcall`: a key of another type answers an error, read as no version, without a
 * `TYPE` first.
 */
const HELD_VERSION = `${READ_HEADER}
local function held_version(key)
  local head = redis.pcall('GETRANGE', key, 0, ${HEADER_SCAN - 1})
  if type(head) ~= 'string' or head == '' then return nil end
  if redis.call('PTTL', key) < 0 then return nil end
  local kind, version = read_header(head, redis.call('STRLEN', key))
  return version
end
`

/**
 * The generation held under `key` (a bucket's generation key), or -1 when it holds garbage (another
 * type, not an integer in range); 0 when there is none. One `GET` under `pcall` (another type
 * answers an error), no `TYPE`.
 */
const READ_GENERATION = `
local function read_generation(key)
  local held = redis.pcall('GET', key)
  if held == false then return 0 end
  if type(held) ~= 'string' then return -1 end
  local generation = tonumber(held)
  if generation and generation >= 0 and generation < ${MAX_VERSION} and generation == math.floor(generation) then return generation end
  return -1
end
`

/**
 * A script's answer when the bucket is in `generation` and not in `expected` (the one the caller
 * named its entry key for): `{moved, false, 0, generation}`, whatever the script; nil when they
 * agree. The caller asks again with the key of the generation answered (see `inBucket` in `l2.ts`).
 * So every key a script touches is one it declared: during a Cluster slot migration Redis answers
 * `ASK` or `TRYAGAIN` to a script whose keys are not all on one node, and never runs it beside a key
 * already moved away.
 */
const MOVED_FROM = `
local function moved_from(generation, expected)
  if generation ~= tonumber(expected) then return {${GET_STATUS.moved}, false, 0, generation} end
  return nil
end
`

/**
 * The entry under `key` as {@link GET_LUA} answers it, past its generation: `false` when there is
 * none (or it is empty: no entry is), else `{status, payload, pttl, generation}`. `STRLEN` under
 * `pcall` tells a missing key (0), another type (an error) and the size, in one command.
 */
const READ_ENTRY = `
local function read_entry(key, generation, max_bytes)
  local size = redis.pcall('STRLEN', key)
  if type(size) ~= 'number' then return {${GET_STATUS.wrongType}, false, 0, generation} end
  if size == 0 then return false end
  if size > max_bytes then return {${GET_STATUS.tooLarge}, false, 0, generation} end
  return {${GET_STATUS.found}, redis.call('GET', key), redis.call('PTTL', key), generation}
end
`

/**
 * Reads the entry of one id with its remaining lifetime, in one step, in its bucket's current
 * generation: KEYS[1] is the bucket's generation key, KEYS[2] the id's entry key in generation
 * ARGV[2] (same hash tag, same slot). Answers `{moved, false, 0, generation}` when the bucket is in
 * another generation (see {@link MOVED_FROM}); `nil` when there is no entry; else `{status, payload,
 * pttl, generation}`: the payload when it is a string of at most ARGV[1] bytes, only the status when
 * it is another type or larger (so a huge entry never crosses the wire), or `{badGeneration}` when
 * the generation key holds garbage.
 */
export const GET_LUA = `${READ_GENERATION}${MOVED_FROM}${READ_ENTRY}
local generation = read_generation(KEYS[1])
if generation < 0 then return {${GET_STATUS.badGeneration}} end
local moved = moved_from(generation, ARGV[2])
if moved then return moved end
return read_entry(KEYS[2], generation, tonumber(ARGV[1]))
`

/** What {@link READ_OR_LEASE_LUA} says of the lease, in the fifth field of its answer. */
export const LEASE_STATUS = { unasked: 0, taken: 1, busy: 2 } as const

/**
 * {@link GET_LUA} and, when what it read is no fill, the id's lease, in one step: KEYS[1] and KEYS[2]
 * and ARGV[1] as for {@link GET_LUA}, KEYS[3] the id's lease key; ARGV[2] the token, ARGV[3] the
 * lease's ttl, ARGV[4] the version the reader knows of, ARGV[5] the generation KEYS[2] is in. A fill
 * is a value or negative row (`v`, `a`) of a version ≥ ARGV[4] whose logical lifetime (its `PTTL`
 * less the grace in its header) is not over; anything else (no entry, a tombstone, an older or
 * graced entry, one {@link READ_HEADER} refuses or without an expiry) asks for the lease with
 * `SET NX PX`. Answers `{status, payload, pttl, generation, lease}` (`lease` from
 * {@link LEASE_STATUS}; the first four as {@link GET_LUA}'s, `status` only 0 when found); in another
 * generation, `{moved, false, 0, generation, unasked}` without asking.
 */
export const READ_OR_LEASE_LUA = `${READ_HEADER}${READ_GENERATION}${MOVED_FROM}${READ_ENTRY}
local generation = read_generation(KEYS[1])
local moved = generation >= 0 and moved_from(generation, ARGV[5])
if moved then
  moved[5] = ${LEASE_STATUS.unasked}
  return moved
end
local entry
if generation < 0 then entry = {${GET_STATUS.badGeneration}, false, 0, 0} else entry = read_entry(KEYS[2], generation, tonumber(ARGV[1])) end
if entry == false then entry = {${GET_STATUS.found}, false, -2, generation} end
if entry[1] == ${GET_STATUS.found} and entry[2] then
  local kind, version, grace = read_header(string.sub(entry[2], 1, ${HEADER_SCAN}), #entry[2])
  if kind and kind ~= 't' and version >= tonumber(ARGV[4]) and entry[3] - grace > 0 then
    entry[5] = ${LEASE_STATUS.unasked}
    return entry
  end
end
if redis.call('SET', KEYS[3], ARGV[2], 'PX', ARGV[3], 'NX') then entry[5] = ${LEASE_STATUS.taken} else entry[5] = ${LEASE_STATUS.busy} end
return entry
`

/**
 * The write of {@link SET_LUA} as a function: 1 when written, 0 when refused, the `moved` answer when
 * the bucket is in another generation than `expected`, the one `key` was named for (see
 * {@link MOVED_FROM}; a generation key holding garbage is generation 0 here). The bucket's
 * generation key is kept at least as long as the entry written (created, holding 0, in a bucket
 * never cleared), so it outlives every entry a clear will hide, and no longer: once the last entry
 * of the bucket has expired, so has it (one written without an expiry, before generation keys had
 * one, keeps none).
 */
const WRITE_ENTRY = `
local function write_entry(generation_key, key, expected, version, ttl, data)
  local generation = read_generation(generation_key)
  if generation < 0 then generation = 0 end
  local moved = moved_from(generation, expected)
  if moved then return moved end
  local held = held_version(key)
  if held and held > tonumber(version) then return 0 end
  redis.call('SET', key, data, 'PX', ttl)
  local left = redis.call('PTTL', generation_key)
  if left == -2 then
    redis.call('SET', generation_key, string.format('%.0f', generation), 'PX', ttl)
  elseif left >= 0 and left < tonumber(ttl) then
    redis.call('PEXPIRE', generation_key, ttl)
  end
  return 1
end
`

/**
 * Writes ARGV[3] as the entry of one id (KEYS as {@link GET_LUA}, ARGV[4] the generation KEYS[2] is
 * in) in its bucket's current generation, with `PX ARGV[2]`, unless the held entry's version is
 * strictly above ARGV[1]; garbage is overwritten. A garbage generation key writes in generation 0
 * (read by nobody until a clear repairs the key). Answers 1 when written, 0 when refused, or
 * {@link MOVED_FROM}'s answer.
 */
export const SET_LUA = `${HELD_VERSION}${READ_GENERATION}${MOVED_FROM}${WRITE_ENTRY}
return write_entry(KEYS[1], KEYS[2], ARGV[4], ARGV[1], ARGV[2], ARGV[3])
`

/**
 * {@link SET_LUA} (KEYS[1], KEYS[2], ARGV[1..3] as there, ARGV[5] the generation KEYS[2] is in),
 * then the end of the id's lease KEYS[3], in one step: a lease holder's fill and its giving back in
 * one round trip. A write that landed ends the lease whoever holds it (one `DEL`, unread: with the
 * fill in L2, every reader finds it before it asks for the lease); a refused one releases it only if
 * ARGV[4] (the writer's token) still holds it; one in another generation touches nothing. Answers
 * as {@link SET_LUA}.
 */
export const SET_AND_RELEASE_LUA = `${HELD_VERSION}${READ_GENERATION}${MOVED_FROM}${WRITE_ENTRY}
local written = write_entry(KEYS[1], KEYS[2], ARGV[5], ARGV[1], ARGV[2], ARGV[3])
if type(written) == 'table' then return written end
if written == 1 or redis.pcall('GET', KEYS[3]) == ARGV[4] then redis.call('DEL', KEYS[3]) end
return written
`

/**
 * Mints the next version of one (table, id): the largest of 1, ARGV[2] (the caller's floor), the last
 * version minted (the version key KEYS[1]) + 1 and the held entry's version + 1 (KEYS[2] and KEYS[3]
 * as KEYS[1] and KEYS[2] of {@link GET_LUA}, ARGV[3] the generation KEYS[3] is in); records it in the
 * version key for ARGV[1] ms and returns it; {@link MOVED_FROM}'s answer, minting nothing, when the
 * bucket is in another generation. A version key that holds garbage is replaced.
 */
export const NEXT_VERSION_LUA = `${HELD_VERSION}${READ_GENERATION}${MOVED_FROM}
local generation = read_generation(KEYS[2])
local moved = generation >= 0 and moved_from(generation, ARGV[3])
if moved then return moved end
local version = math.max(tonumber(ARGV[2]), 1)
local last = redis.pcall('GET', KEYS[1])
if type(last) == 'string' then
  local issued = tonumber(last)
  if issued and issued >= 0 and issued < ${MAX_VERSION} and issued + 1 > version then version = issued + 1 end
end
if generation >= 0 then
  local held = held_version(KEYS[3])
  if held and held < ${MAX_VERSION} and held + 1 > version then version = held + 1 end
end
redis.call('SET', KEYS[1], string.format('%.0f', version), 'PX', ARGV[1])
return version
`

/**
 * Clears one bucket of a table: moves its generation key KEYS[1] one past the generation held and
 * returns the new one, keeping the key's expiry (it outlives every entry written in the bucket, see
 * `WRITE_ENTRY`). A key holding garbage is replaced by the server's clock in ms, a generation above
 * any a counter reached, so no entry written before is ever read again. A key without an expiry
 * (garbage, or written before generation keys had one) and a missing one (a bucket written only
 * before writes kept a generation key may still hold entries of generation 0) get ARGV[1], the
 * longest an entry may live.
 */
export const CLEAR_LUA = `${READ_GENERATION}
local left = redis.call('PTTL', KEYS[1])
local generation = read_generation(KEYS[1])
if generation < 0 then
  local now = redis.call('TIME')
  generation = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
end
generation = generation + 1
if left < 0 then left = ARGV[1] elseif left < 1 then left = 1 end
redis.call('SET', KEYS[1], string.format('%.0f', generation), 'PX', left)
return generation
`

/** Releases the lease under KEYS[1] if ARGV[1] (the holder's token) still holds it: 1 when released, 0 otherwise. */
export const RELEASE_LEASE_LUA = `
if redis.pcall('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
`

/**
 * Gives the tag whose version key is KEYS[1] its next version: the largest of ARGV[1] (the floor)
 * and one more than the version held (garbage reads as none), kept `PX ARGV[2]`. Answers it.
 */
export const INVALIDATE_TAG_LUA = `
local held = 0
if redis.call('TYPE', KEYS[1]).ok == 'string' then
  local read = tonumber(redis.call('GET', KEYS[1]))
  if read and read >= 0 and read <= ${MAX_VERSION} and read == math.floor(read) then held = read end
end
local version = math.max(held + 1, tonumber(ARGV[1]))
if version > ${MAX_VERSION} then version = ${MAX_VERSION} end
redis.call('SET', KEYS[1], string.format('%.0f', version), 'PX', ARGV[2])
return version
`
