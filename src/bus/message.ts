/**
 * The coherence message on the wire, and the one gate every incoming message passes.
 *
 * Wire format: one UTF-8 JSON object per message, at most `MAX_WIRE_BYTES` bytes,
 *
 *   {"table":"emoji_sets","id":"party","version":17,"kind":"invalidate","origin":"b3f…"}
 *   {"table":"emoji_sets","kind":"clear","origin":"b3f…"}
 *   {"table":"emoji_sets","kind":"clear","origin":"b3f…","taken":true,"space":"shop:prod:"}
 *   {"table":"emoji_sets","id":"party","version":17,"kind":"fill","origin":"b3f…"}
 *   {"table":"emoji_sets","id":"party","version":17,"kind":"unfilled","origin":"b3f…","lease":"9c1…"}
 *   {"table":"emoji_sets","id":"party","version":17,"kind":"unfilled","origin":"b3f…","lease":"9c1…","failed":true}
 *   {"table":"emoji_sets","kind":"tag","tag":"depot:7","scope":[],"version":17,"origin":"b3f…"}
 *   {"table":"emoji_sets","kind":"tag","tag":"depot:7","scope":[],"version":17,"origin":"b3f…","taken":true,"space":"shop:prod:"}
 *   {"table":"emoji_sets","kind":"clear","scope":["tenant-a"],"version":17,"origin":"b3f…"}
 *   {"table":"emoji_sets","id":"party","version":17,"kind":"put","origin":"b3f…","space":"shop:prod:"}
 *
 * - `table`: non-empty string, at most `MAX_TABLE_LENGTH` UTF-16 code units;
 * - `kind`: `"put"` or `"invalidate"` (a change of one id), `"fill"` (a lease holder filled the
 *   id), `"unfilled"` (a lease holder ended without a fill; `lease`: its token, a non-empty string of
 *   at most `MAX_LEASE_LENGTH`; `failed`, optional: `true` when its loader failed), `"tag"` (a
 *   tag's invalidation: `tag`, a non-empty string of at most `MAX_ID_LENGTH` code units, in the
 *   namespace path `scope`, and the `version` it got), or
 *   `"clear"` (the whole table; with `scope` and `version`, one namespace); a tag and a clear carry
 *   `taken`, optional: `true` when the publisher's L2 took it (a tag's or a namespace's clear: it
 *   minted the version, so the store of its `space` holds it; the whole table's: it moved to a new
 *   generation);
 * - `scope` (tags, and a namespace's clear): an array of at most `MAX_NAMESPACE_DEPTH` non-empty
 *   strings of at most `MAX_NAMESPACE_LENGTH` code units each;
 * - `id` (all but clears): a string (at most `MAX_KEY_LENGTH` code units: a caller's id, at most
 *   `MAX_ID_LENGTH`, or the key a namespace stores it under) or a finite number; the JSON type is the
 *   id's type, so `1` and `"1"` stay different ids;
 * - `version` (all but clears): an integer in [0, 2^52] (`-0` reads as `0`), as tables use;
 * - `origin`: non-empty string, at most `MAX_ORIGIN_LENGTH` code units;
 * - `space` (optional, every kind): the key space of the publishing table's L2 (`L2Store.keySpace`,
 *   a `redisL2`'s prefix), a string of at most `MAX_TABLE_LENGTH` code units; a table whose L2 has
 *   another ignores the message;
 * - `ns` (optional, from `redisBus`): the key space of the publisher (its `namespace`, the L2 prefix),
 *   a string of at most `MAX_TABLE_LENGTH` code units; receivers in another key space ignore the message.
 *
 * Unknown extra keys are ignored (a newer publisher may add fields during a rolling upgrade; a clear
 * ignores `id` and `version`), except `__proto__`, `constructor` and `prototype`, which reject the
 * message. A valid message is always re-read into a fresh object holding only its known fields, so nothing a sender adds
 * is ever merged into anything. JSON writes at most 6 bytes per UTF-16 code unit, so a message with
 * every field at its limit still fits in `MAX_WIRE_BYTES`: whatever a table accepts, the bus carries.
 */
import { badArgument } from '../core/errors.js'
import { MAX_ID_LENGTH } from '../core/id.js'
import { MAX_VERSION, isVersion } from '../core/versions.js'
import { MAX_KEY_LENGTH, MAX_NAMESPACE_DEPTH, MAX_NAMESPACE_LENGTH } from '../core/id.js'
import type { ChangeMessage, CoherenceMessage, FillMessage, UnfilledMessage } from './bus.js'

/**
 * Largest payload `decodeWire` reads, in bytes (640 KiB); larger payloads are refused before
 * parsing. A message with every field at its limit, an `id` of `MAX_KEY_LENGTH` code units of 6
 * bytes of JSON each among them, takes about 632 KiB.
 */
export const MAX_WIRE_BYTES = 640 * 1024
/** Longest `table` name, in UTF-16 code units. */
export const MAX_TABLE_LENGTH = 1024
/** Longest `origin`, in UTF-16 code units: room for a table's origin, its name (at most {@link MAX_TABLE_LENGTH}) and a UUID. */
export const MAX_ORIGIN_LENGTH = MAX_TABLE_LENGTH + 64
/** Longest `lease` token of an `unfilled` message, in UTF-16 code units. */
export const MAX_LEASE_LENGTH = 128

/**
 * The outcome of reading a message: the fresh, validated message (with the key space it was
 * published in, when the wire named one: `ns`), or why it was refused.
 */
export type ParseResult = { ok: true; message: CoherenceMessage; namespace?: string } | { ok: false; reason: string }

const POISONED_KEYS = ['__proto__', 'constructor', 'prototype'] as const
const utf8 = new TextDecoder('utf-8', { fatal: true })

const refuse = (reason: string): ParseResult => ({ ok: false, reason })

/**
 * Validates an untrusted value as a coherence message. Never throws: getters and proxies that
 * throw are refused too. Returns a fresh object with only the known fields.
 */
export function parseCoherenceMessage(raw: unknown): ParseResult {
  try {
    return parseObject(raw)
  } catch {
    return refuse('message could not be read')
  }
}

function parseObject(raw: unknown): ParseResult {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return refuse('message is not an object')
  const proto: unknown = Object.getPrototypeOf(raw)
  if (proto !== Object.prototype && proto !== null) return refuse('message is not a plain object')
  for (const key of POISONED_KEYS) {
    if (Object.hasOwn(raw, key)) return refuse(`message has a forbidden key "${key}"`)
  }
  // Own properties only: a polluted Object.prototype must not supply a missing field.
  const own = (key: string): unknown => (Object.hasOwn(raw, key) ? (raw as Record<string, unknown>)[key] : undefined)
  const table = own('table')
  const id = own('id')
  const version = own('version')
  const kind = own('kind')
  const origin = own('origin')

  if (typeof table !== 'string' || table.length === 0) return refuse('table must be a non-empty string')
  if (table.length > MAX_TABLE_LENGTH) return refuse(`table is longer than ${MAX_TABLE_LENGTH}`)
  if (typeof origin !== 'string' || origin.length === 0) return refuse('origin must be a non-empty string')
  if (origin.length > MAX_ORIGIN_LENGTH) return refuse(`origin is longer than ${MAX_ORIGIN_LENGTH}`)
  const ns = own('ns')
  if (ns !== undefined && (typeof ns !== 'string' || ns.length > MAX_TABLE_LENGTH)) return refuse(`ns must be a string of at most ${MAX_TABLE_LENGTH} code units`)
  const space = ns === undefined ? {} : { namespace: ns }
  const rawKeySpace = own('space')
  if (rawKeySpace !== undefined && (typeof rawKeySpace !== 'string' || rawKeySpace.length > MAX_TABLE_LENGTH)) return refuse(`space must be a string of at most ${MAX_TABLE_LENGTH} code units`)
  // Added to every message read: the publisher's L2 key space, when it named one.
  const stamp: { space?: string } = rawKeySpace === undefined ? {} : { space: rawKeySpace }
  const rawScope = own('scope')
  const scope = rawScope === undefined ? undefined : scopeOf(rawScope)
  if (scope === null) return refuse(`scope must be an array of at most ${MAX_NAMESPACE_DEPTH} non-empty strings of at most ${MAX_NAMESPACE_LENGTH} code units`)
  const rawTaken = own('taken')
  if (rawTaken !== undefined && typeof rawTaken !== 'boolean') return refuse('taken must be a boolean when present')
  // Added to a tag's message and a clear's: the publisher's L2 took it (see `ClearMessage.taken`).
  const taken: { taken?: true } = rawTaken === true ? { taken: true } : {}
  if (kind === 'clear') {
    if (scope === undefined || scope.length === 0) return { ok: true, message: { table, kind, origin, ...taken, ...stamp }, ...space }
    if (!isVersion(version)) return refuse(`version must be an integer in [0, ${MAX_VERSION}]`)
    return { ok: true, message: { table, kind, origin, scope, version: version + 0, ...taken, ...stamp }, ...space }
  }
  if (kind === 'tag') {
    const tag = own('tag')
    if (typeof tag !== 'string' || tag.length === 0 || tag.length > MAX_ID_LENGTH) return refuse(`tag must be a non-empty string of at most ${MAX_ID_LENGTH}`)
    if (!isVersion(version)) return refuse(`version must be an integer in [0, ${MAX_VERSION}]`)
    return { ok: true, message: { table, kind, tag, scope: scope ?? [], version: version + 0, origin, ...taken, ...stamp }, ...space }
  }
  if (typeof id === 'string') {
    if (id.length > MAX_KEY_LENGTH) return refuse(`id is longer than ${MAX_KEY_LENGTH}`)
  } else if (typeof id !== 'number' || !Number.isFinite(id)) {
    return refuse('id must be a string or a finite number')
  }
  if (!isVersion(version)) return refuse(`version must be an integer in [0, ${MAX_VERSION}]`)
  if (kind !== 'put' && kind !== 'invalidate' && kind !== 'fill' && kind !== 'unfilled') return refuse('kind must be "put", "invalidate", "fill", "unfilled", "tag" or "clear"')
  if (kind === 'unfilled') {
    const lease = own('lease')
    if (typeof lease !== 'string' || lease.length === 0 || lease.length > MAX_LEASE_LENGTH) return refuse(`lease must be a non-empty string of at most ${MAX_LEASE_LENGTH}`)
    const failed = own('failed')
    if (failed !== undefined && typeof failed !== 'boolean') return refuse('failed must be a boolean when present')
    const unfilled: UnfilledMessage = { table, id: typeof id === 'number' ? id + 0 : id, version: version + 0, kind, origin, lease }
    return { ok: true, message: failed === true ? { ...unfilled, failed, ...stamp } : { ...unfilled, ...stamp }, ...space }
  }

  // `+ 0` turns -0 into 0, which is what JSON carries.
  const message: ChangeMessage | FillMessage = {
    table,
    id: typeof id === 'number' ? id + 0 : id,
    version: version + 0,
    kind,
    origin,
    ...stamp,
  }
  return { ok: true, message, ...space }
}

/** A namespace path from the wire (a fresh array), or `null` when it is not one. */
function scopeOf(raw: unknown): string[] | null {
  if (!Array.isArray(raw) || raw.length > MAX_NAMESPACE_DEPTH) return null
  const scope: string[] = []
  for (const name of raw as unknown[]) {
    if (typeof name !== 'string' || name.length === 0 || name.length > MAX_NAMESPACE_LENGTH) return null
    scope.push(name)
  }
  return scope
}

/**
 * Encodes a message in the wire format: JSON of its known fields, in a fixed order, then its
 * `space` when it has one, then `ns` when a `namespace` is given. Encode only messages
 * `parseCoherenceMessage` accepted, with a namespace of at most `MAX_TABLE_LENGTH` code units;
 * those always fit in `MAX_WIRE_BYTES`.
 */
export function encodeWire(message: CoherenceMessage, namespace?: string): string {
  const tail = { ...(message.space === undefined ? {} : { space: message.space }), ...(namespace === undefined ? {} : { ns: namespace }) }
  if (message.kind === 'clear') {
    const { table, kind, origin, scope, version, taken } = message
    if (scope === undefined) return JSON.stringify(taken === true ? { table, kind, origin, taken, ...tail } : { table, kind, origin, ...tail })
    return JSON.stringify(taken === true ? { table, kind, origin, scope, version, taken, ...tail } : { table, kind, origin, scope, version, ...tail })
  }
  if (message.kind === 'tag') {
    const { table, kind, tag, scope, version, origin, taken } = message
    return JSON.stringify(taken === true ? { table, kind, tag, scope, version, origin, taken, ...tail } : { table, kind, tag, scope, version, origin, ...tail })
  }
  if (message.kind === 'unfilled') {
    const { table, id, version, kind, origin, lease, failed } = message
    return JSON.stringify(failed === true ? { table, id, version, kind, origin, lease, failed, ...tail } : { table, id, version, kind, origin, lease, ...tail })
  }
  const { table, id, version, kind, origin } = message
  return JSON.stringify({ table, id, version, kind, origin, ...tail })
}

/**
 * Reads one payload off the wire. Refuses payloads over `MAX_WIRE_BYTES` before decoding them,
 * invalid UTF-8 and non-JSON, then validates with `parseCoherenceMessage`. Never throws.
 * `JSON.parse` defines `__proto__` as an ordinary own key (it never sets a prototype), and such
 * keys are refused by the validation, so a payload cannot pollute any prototype.
 */
export function decodeWire(payload: string | Buffer): ParseResult {
  let text: string
  if (typeof payload === 'string') {
    // A string takes at least one UTF-8 byte per code unit: the cheap test first.
    if (payload.length > MAX_WIRE_BYTES || Buffer.byteLength(payload) > MAX_WIRE_BYTES) {
      return refuse(`payload is larger than ${MAX_WIRE_BYTES} bytes`)
    }
    text = payload
  } else {
    if (payload.byteLength > MAX_WIRE_BYTES) return refuse(`payload is larger than ${MAX_WIRE_BYTES} bytes`)
    try {
      text = utf8.decode(payload)
    } catch {
      return refuse('payload is not valid UTF-8')
    }
  }
  let raw: unknown
  try {
    raw = JSON.parse(text)
  } catch {
    return refuse('payload is not JSON')
  }
  return parseCoherenceMessage(raw)
}

/** `message` checked for publishing on the bus named `bus`: the fresh copy to send, or a `TypeError` saying what is wrong with it. */
export function publishable(bus: string, message: unknown): CoherenceMessage {
  const parsed = parseCoherenceMessage(message)
  if (!parsed.ok) throw badArgument(TypeError, `${bus}.publish: invalid coherence message: ${parsed.reason}`)
  return parsed.message
}
