/**
 * How one L2 entry is laid out in Redis: one string key per entry, `<kind><version>[+<grace>][@<born>#<n>]:`,
 * then (for a tagged row) `n` bytes of its tag keys as a JSON array, then the codec payload. The kind
 * is one letter (`v` value, `a` absent, `t` tombstone), the version is decimal (at most 16 digits),
 * the grace (ms the key outlives the entry's logical lifetime, at most 11 digits) is there only when
 * not 0, the birth (16 digits at most) and the tags' length only for a tagged row, and absent and
 * tombstone entries carry no payload. The header is ASCII and never longer than 63 bytes; the scripts
 * read only its first {@link HEADER_SCAN} bytes (the version, for the guard). Tags count towards `maxValueBytes`.
 *
 * One rule says which entries are *readable*, in the reader here and in the scripts (`read_header`
 * and `held_version` in `scripts.ts`, which must say the same): a string key with an expiry whose
 * header {@link readHeader} parses (kind, version and birth in range, the tags within the bytes, no
 * tags on a tombstone). Only a readable entry's version is honoured by a write's guard; anything
 * else (no expiry, no header, a version out of range) is corrupt to the reader and no version to
 * the writer, so the next write of any version repairs it. What follows a readable header (the
 * tags' JSON, the codec's payload) is read here only: an entry whose payload does not decode is a
 * corrupt miss whose version still fences lower ones until it expires.
 */
import { L2CorruptEntryError, L2UnfitValueError, reasonOf } from '../core/errors.js'
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
    throw new L2UnfitValueError(key, 'codec', reasonOf(error))
  }
  const bytes = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload
  const size = bytes.length + (tags?.length ?? 0)
  if (size > maxValueBytes) throw new L2UnfitValueError(key, 'size', `${size} bytes, maxValueBytes ${maxValueBytes}`)
  return tags === undefined ? Buffer.concat([header, bytes]) : Buffer.concat([header, tags, bytes])
}

/** What a readable header says: where the tags (if any) and the payload start, in `data`. */
export interface Header {
  readonly kind: L2Kind
  readonly version: number
  /** Ms the key outlives the entry's logical lifetime; undefined when the header carries none. */
  readonly grace: number | undefined
  /** The tagged row's birth and the byte range of its tags; undefined for an untagged row. */
  readonly tags: { readonly born: number; readonly start: number; readonly end: number } | undefined
  /** Where the payload starts. */
  readonly start: number
}

/**
 * The header of the entry `data` holds, or why it is unreadable (a string): no header, a version or
 * birth out of range, tags past the end of the bytes or on a tombstone. The scripts' `read_header`
 * (`scripts.ts`) is the same rule in Lua: keep them together.
 */
export function readHeader(data: Buffer): Header | string {
  const match = HEADER.exec(data.subarray(0, HEADER_SCAN).toString('latin1'))
  const kind = match && LETTER_KIND[match[1]!]
  if (!match || !kind) return 'no entry header'
  const version = Number(match[2])
  if (!isVersion(version)) return `version ${match[2]} is out of range`
  const grace = match[3] === undefined ? undefined : Number(match[3])
  const start = match[0].length
  if (match[4] === undefined) return { kind, version, grace, tags: undefined, start }
  const born = Number(match[4])
  const end = start + Number(match[5])
  if (!isVersion(born) || end > data.length || kind === 'tombstone') return 'a tag header out of range'
  return { kind, version, grace, tags: { born, start, end }, start: end }
}

/**
 * The entry `data` holds, whose key has `pttl` ms left: its logical lifetime left is that less its
 * grace. Throws `L2CorruptEntryError` for a header {@link readHeader} refuses, tags that are not a
 * JSON array of strings, or a payload the codec refuses.
 */
export function decodeEntry(key: string, data: Buffer, pttl: number, codec: Codec): L2Entry {
  const header = readHeader(data)
  if (typeof header === 'string') throw new L2CorruptEntryError(key, header)
  const { kind, version, grace, tags, start } = header
  const ttl = pttl - (grace ?? 0)
  const kept: { grace?: number; tags?: string[]; born?: number } = grace === undefined ? {} : { grace }
  if (tags !== undefined) {
    kept.tags = decodeTags(key, data.subarray(tags.start, tags.end))
    kept.born = tags.born
  }
  if (kind !== 'value') return { kind, version, ttl, ...kept }
  let value: unknown
  try {
    value = codec.decode(data.subarray(start))
  } catch (error) {
    throw new L2CorruptEntryError(key, reasonOf(error))
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
