import { deserialize, serialize } from 'node:v8'
import { PREFIX, badArgument, describe } from '../core/errors.js'

/**
 * Turns an L2 value into bytes and back. Only values travel through a codec: the negative marker
 * (`kind: 'absent'`), tombstones and versions live in the entry header, so a codec never has to
 * reserve a value for them. `decode` throws on a payload it does not accept; the adapter reports
 * that as an `L2CorruptEntryError` (a miss for the table).
 */
export interface Codec {
  /** The payload for `value`; a string is written as UTF-8. Throws for a value it cannot carry. */
  encode(value: unknown): Buffer | string
  /** The value a payload holds. Throws for a payload that is malformed or unsafe. */
  decode(payload: Buffer): unknown
}

/** Text that might spell a dangerous key, directly or through `\u` escapes; anything else parses fast. */
const SUSPECT = /proto|\\u/

/**
 * Refuses the keys that can pollute prototypes when a decoded object is later merged: `__proto__`
 * anywhere, and `prototype` inside a `constructor` object. Any other key, `constructor` holding a
 * string or a number included, is ordinary data.
 */
function refusePolluting(key: string, value: unknown): unknown {
  if (key === '__proto__') throw new SyntaxError(`${PREFIX}jsonCodec: refused a payload holding the key "__proto__"`)
  if (key === 'constructor' && typeof value === 'object' && value !== null && Object.hasOwn(value, 'prototype')) {
    throw new SyntaxError(`${PREFIX}jsonCodec: refused a payload holding the key "constructor.prototype"`)
  }
  return value
}

/**
 * The default codec: JSON as UTF-8. `undefined` is the empty payload (so it round trips); `null`,
 * numbers, strings, booleans, arrays and plain objects round trip as JSON does (`Date` becomes a
 * string, `undefined` inside objects is dropped). A top-level value JSON cannot carry (a function, a
 * symbol), a `BigInt` or a cycle throws on encode (the table counts it `l2_codec_errors` and writes
 * nothing). `decode` rejects a payload holding a `__proto__` key, or a `prototype` key inside a
 * `constructor` object, at any depth and however it is escaped, and `encode` refuses a value that
 * would make such a payload (an own `__proto__` key, as `JSON.parse` of outside data gives).
 */
export const jsonCodec: Codec = {
  encode(value) {
    if (value === undefined) return ''
    const text = JSON.stringify(value) as string | undefined
    if (text === undefined) throw badArgument(TypeError, `jsonCodec: cannot encode ${describe(value)}`)
    // What decode would refuse is not written: it would be read back by nobody, every time.
    if (SUSPECT.test(text)) JSON.parse(text, refusePolluting)
    return text
  },
  decode(payload) {
    if (payload.length === 0) return undefined
    const text = payload.toString('utf8')
    return SUSPECT.test(text) ? JSON.parse(text, refusePolluting) : JSON.parse(text)
  },
}

/**
 * Node's structured serialisation (`node:v8`): carries `Map`, `Set`, `Date`, `BigInt`, typed arrays,
 * `undefined` and cycles. Both ends must run a compatible Node; functions and class prototypes do
 * not survive (class instances come back as plain objects).
 */
export const v8Codec: Codec = {
  encode: (value) => serialize(value),
  decode: (payload) => deserialize(payload),
}
