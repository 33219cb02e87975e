/**
 * How one L2 entry is laid out in Redis: one string key per entry, `<kind><version>[+<grace>][@<born>#<n>]:`,
 * then (for a tagged row) `n` bytes of its tag keys as a JSON array, then the codec payload. The kind
 * is one letter (`v` value, `a` absent, `t` tombstone), the version is decimal (at most 16 digits),
 * the grace (ms the key outlives the entry's logical lifetime, at most 11 digits) is there only when
 * not 0, the birth (16 digits at most) and the tags' length only for a tagged row, and absent and
 * tombstone entries carry no payload. The header is ASCII and never longer than 63 bytes; the scripts
 * read only its first {@link HEADER_SCAN} bytes (the version, for the guard). Tags count towards `maxValueBytes`.
 */
import { L2CorruptEntryError, L2UnfitValueError } from '../core/errors.js'
import { isVersion } from '../core/versions.js'
import type { Codec } from '../l2/codec.js'
import type { L2Entry, L2Kind, L2Write } from '../l2/store.js'

/** Bytes of an entry the scripts read to find its header. */
export const HEADER_SCAN = 64

const KIND_LETTER: Record<L2Kind, string> = { value: 'v', absent: 'a', tombstone: 't' }
const LETTER_KIND: Record<string, L2Kind | undefined> = { v: 'value', a: 'absent', t: 'tombstone' }
const HEADER = /^([vat])(\d{1,16})(?:\+(\d{1,11}))?(?:@(\d{1,16})#(\d{1,9}))?:/

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
  const tags = entry.tags !== undefined && entry.kind !== 'tombstone' ? Buffer.from(JSON.stringify(entry.tags), 'utf8') : undefined
  const tagged = tags === undefined ? '' : `@${entry.born ?? 0}#${tags.length}`
  const header = Buffer.from(`${KIND_LETTER[entry.kind]}${entry.version}${grace > 0 ? `+${grace}` : ''}${tagged}:`, 'latin1')
  if (tags !== undefined && tags.length > maxValueBytes) throw new L2UnfitValueError(key, 'size', `tags of ${tags.length} bytes, maxValueBytes ${maxValueBytes}`)
  if (entry.kind !== 'value') return tags === undefined ? header : Buffer.concat([header, tags])
  let payload: Buffer | string
  try {
    payload = codec.encode(entry.value)
  } catch (error) {
    throw new L2UnfitValueError(key, 'codec', error instanceof Error ? error.message : String(error))
  }
  const bytes = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload
  const size = bytes.length + (tags?.length ?? 0)
  if (size > maxValueBytes) throw new L2UnfitValueError(key, 'size', `${size} bytes, maxValueBytes ${maxValueBytes}`)
  return tags === undefined ? Buffer.concat([header, bytes]) : Buffer.concat([header, tags, bytes])
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
  const kept: { grace?: number; tags?: string[]; born?: number } = grace === undefined ? {} : { grace }
  let start = match[0].length
  if (match[4] !== undefined) {
    const born = Number(match[4])
    const end = start + Number(match[5])
    if (!isVersion(born) || end > data.length || kind === 'tombstone') throw new L2CorruptEntryError(key, 'a tag header out of range')
    kept.tags = decodeTags(key, data.subarray(start, end))
    kept.born = born
    start = end
  }
  if (kind !== 'value') return { kind, version, ttl, ...kept }
  let value: unknown
  try {
    value = codec.decode(data.subarray(start))
  } catch (error) {
    throw new L2CorruptEntryError(key, error instanceof Error ? error.message : String(error))
  }
  return { kind, value, version, ttl, ...kept }
}

/** The tag keys of an entry: a JSON array of strings; anything else is a corrupt entry. */
function decodeTags(key: string, bytes: Buffer): string[] {
  let tags: unknown
  try {
    tags = JSON.parse(bytes.toString('utf8'))
  } catch {
    throw new L2CorruptEntryError(key, 'its tags are not JSON')
  }
  if (!Array.isArray(tags) || !tags.every((tag) => typeof tag === 'string')) throw new L2CorruptEntryError(key, 'its tags are not an array of strings')
  return tags
}
