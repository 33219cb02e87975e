/**
 * How one L2 entry is laid out in Redis: one string key per entry, `<kind><version>[+<grace>]:` then
 * the codec payload. The kind is one letter (`v` value, `a` absent, `t` tombstone), the version is
 * decimal (at most 16 digits), the grace (ms the key outlives the entry's logical lifetime, at most
 * 11 digits) is there only when not 0, and absent and tombstone entries carry no payload. The header
 * is ASCII and never longer than 31 bytes; the scripts read only its first {@link HEADER_SCAN} bytes.
 */
import { L2CorruptEntryError, L2UnfitValueError } from '../core/errors.js'
import { isVersion } from '../core/versions.js'
import type { Codec } from '../l2/codec.js'
import type { L2Entry, L2Kind, L2Write } from '../l2/store.js'

/** Bytes of an entry the scripts read to find its header. */
export const HEADER_SCAN = 32

const KIND_LETTER: Record<L2Kind, string> = { value: 'v', absent: 'a', tombstone: 't' }
const LETTER_KIND: Record<string, L2Kind | undefined> = { v: 'value', a: 'absent', t: 'tombstone' }
const HEADER = /^([vat])(\d{1,16})(?:\+(\d{1,11}))?:/

/** True for a kind an entry may have. */
export function isKind(kind: unknown): kind is L2Kind {
  return typeof kind === 'string' && Object.hasOwn(KIND_LETTER, kind)
}

/**
 * The bytes of `entry` under `key`: its header, then (for a value) the codec's payload. Rejects with
 * `L2UnfitValueError` when the codec cannot encode the value or the payload is larger than `maxValueBytes`.
 */
export function encodeEntry(key: string, entry: L2Write, codec: Codec, maxValueBytes: number): Buffer {
  const grace = entry.grace ?? 0
  const header = Buffer.from(`${KIND_LETTER[entry.kind]}${entry.version}${grace > 0 ? `+${grace}` : ''}:`, 'latin1')
  if (entry.kind !== 'value') return header
  let payload: Buffer | string
  try {
    payload = codec.encode(entry.value)
  } catch (error) {
    throw new L2UnfitValueError(key, 'codec', error instanceof Error ? error.message : String(error))
  }
  const bytes = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload
  if (bytes.length > maxValueBytes) throw new L2UnfitValueError(key, 'size', `${bytes.length} bytes, maxValueBytes ${maxValueBytes}`)
  return Buffer.concat([header, bytes])
}

/**
 * The entry `data` holds, whose key has `pttl` ms left: its logical lifetime left is that less its
 * grace. Throws `L2CorruptEntryError` for a missing header, a version out of range, or a payload the
 * codec refuses.
 */
export function decodeEntry(key: string, data: Buffer, pttl: number, codec: Codec): L2Entry {
  const match = HEADER.exec(data.subarray(0, HEADER_SCAN).toString('latin1'))
  const kind = match && LETTER_KIND[match[1]!]
  if (!match || !kind) throw new L2CorruptEntryError(key, 'no entry header')
  const version = Number(match[2])
  if (!isVersion(version)) throw new L2CorruptEntryError(key, `version ${match[2]} is out of range`)
  const grace = match[3] === undefined ? undefined : Number(match[3])
  const ttl = pttl - (grace ?? 0)
  const kept = grace === undefined ? {} : { grace }
  if (kind !== 'value') return { kind, version, ttl, ...kept }
  let value: unknown
  try {
    value = codec.decode(data.subarray(match[0].length))
  } catch (error) {
    throw new L2CorruptEntryError(key, error instanceof Error ? error.message : String(error))
  }
  return { kind, value, version, ttl, ...kept }
}
