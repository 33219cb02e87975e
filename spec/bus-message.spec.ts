import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { ChangeMessage, CoherenceMessage } from '../src/bus/bus.js'
import { MAX_KEY_LENGTH } from '../src/core/id.js'
import { MAX_VERSION } from '../src/core/versions.js'
import { MAX_LEASE_LENGTH, MAX_ORIGIN_LENGTH, MAX_TABLE_LENGTH, MAX_WIRE_BYTES, decodeWire, encodeWire, parseCoherenceMessage } from '../src/bus/message.js'
import { MALFORMED_PAYLOADS, message } from './bus-contract.js'

// Any UTF-16 code unit, lone surrogates included.
const codeUnit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c))
const text = (minLength: number, maxLength: number) => fc.string({ unit: codeUnit, minLength, maxLength })
const finite = fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => n + 0) // -0 travels as 0

const validMessage: fc.Arbitrary<CoherenceMessage> = fc.record({
  table: text(1, 40),
  id: fc.oneof(text(0, 40), fc.integer(), finite),
  version: fc.oneof(fc.nat(), fc.integer({ min: 0, max: MAX_VERSION }), fc.constant(MAX_VERSION)),
  kind: fc.constantFrom('put' as const, 'invalidate' as const),
  origin: text(1, 40),
})

const notA = (...types: string[]) => fc.anything().filter((v) => !types.includes(typeof v))
const tooLong = (limit: number) => fc.constant('x'.repeat(limit + 1))

/** For each field, values that make a message invalid (`undefined` is a missing field). */
const invalidValues: Record<keyof ChangeMessage, fc.Arbitrary<unknown>> = {
  table: fc.oneof(fc.constant(''), tooLong(MAX_TABLE_LENGTH), notA('string')),
  id: fc.oneof(fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY), tooLong(MAX_KEY_LENGTH), notA('string', 'number')),
  version: fc.oneof(
    fc.double({ max: -Number.MIN_VALUE, noNaN: true }),
    fc.double({ min: 0, max: 1e12, noNaN: true }).filter((n) => !Number.isInteger(n)),
    fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, MAX_VERSION + 1, Number.MAX_SAFE_INTEGER, 2 ** 53),
    notA('number'),
  ),
  kind: fc.anything().filter((v) => v !== 'put' && v !== 'invalidate' && v !== 'clear'),
  origin: fc.oneof(fc.constant(''), tooLong(MAX_ORIGIN_LENGTH), notA('string')),
  space: fc.oneof(tooLong(MAX_TABLE_LENGTH), notA('string', 'undefined')),
}
const fields = Object.keys(invalidValues) as (keyof ChangeMessage)[]
const invalidField = fc.constantFrom(...fields).chain((field) => fc.tuple(fc.constant(field), invalidValues[field]))

describe('the wire format', () => {
  it('round-trips every valid message: parse and decode(encode(m)) give back m', () => {
    fc.assert(
      fc.property(validMessage, (m) => {
        expect(parseCoherenceMessage(m)).toEqual({ ok: true, message: m })
        expect(decodeWire(encodeWire(m))).toEqual({ ok: true, message: m })
        expect(decodeWire(Buffer.from(encodeWire(m)))).toEqual({ ok: true, message: m })
      }),
      { numRuns: 500 },
    )
  })

  it('carries the key space of the publisher\u2019s L2 (space) in every kind, beside the bus\u2019s namespace (ns)', () => {
    const kinds: CoherenceMessage[] = [
      { table: 't', id: 'a', version: 1, kind: 'put', origin: 'o', space: 'shop:prod:' },
      { table: 't', id: 1, version: 1, kind: 'fill', origin: 'o', space: '' },
      { table: 't', id: 'a', version: 1, kind: 'unfilled', origin: 'o', lease: 'l', failed: true, space: 'shop:prod:' },
      { table: 't', kind: 'clear', origin: 'o', space: 'shop:prod:' },
      { table: 't', kind: 'clear', origin: 'o', scope: ['a'], version: 3, space: 'shop:prod:' },
      { table: 't', kind: 'tag', tag: 'x', scope: [], version: 3, origin: 'o', space: 'shop:prod:' },
    ]
    for (const m of kinds) {
      expect(parseCoherenceMessage(m)).toEqual({ ok: true, message: m })
      expect(decodeWire(encodeWire(m, 'echostore:'))).toEqual({ ok: true, message: m, namespace: 'echostore:' })
      expect(JSON.parse(encodeWire(m)).space).toBe(m.space)
    }
    expect(parseCoherenceMessage({ ...kinds[0], space: 'x'.repeat(MAX_TABLE_LENGTH + 1) })).toMatchObject({ ok: false })
    expect(parseCoherenceMessage({ ...kinds[0], space: 7 })).toEqual({ ok: false, reason: `space must be a string of at most ${MAX_TABLE_LENGTH} code units` })
  })

  it('rejects any message with one field made invalid or removed', () => {
    fc.assert(
      fc.property(validMessage, invalidField, fc.boolean(), (m, [field, bad], remove) => {
        const mutated: Record<string, unknown> = { ...m, [field]: bad }
        if (bad === undefined && remove) delete mutated[field]
        const parsed = parseCoherenceMessage(mutated)
        expect(parsed.ok).toBe(false)
        // Through the wire too, whenever the mutation survives JSON.
        const wire = JSON.stringify(mutated)
        if (wire !== undefined) expect(decodeWire(wire).ok).toBe(false)
      }),
      { numRuns: 500 },
    )
  })

  it('reads a clear of a whole table with its three fields, ignoring an id or version it carries', () => {
    const clear: CoherenceMessage = { table: 'emoji_sets', kind: 'clear', origin: 'spec' }
    expect(parseCoherenceMessage({ ...clear, id: {}, version: -1 })).toEqual({ ok: true, message: clear })
    expect(encodeWire({ ...clear, id: 1 } as CoherenceMessage)).toBe('{"table":"emoji_sets","kind":"clear","origin":"spec"}')
    expect(decodeWire(encodeWire(clear))).toEqual({ ok: true, message: clear })
    expect(parseCoherenceMessage({ kind: 'clear', origin: 'spec' })).toEqual({ ok: false, reason: 'table must be a non-empty string' })
    expect(parseCoherenceMessage({ table: 't', kind: 'clear', origin: '' })).toEqual({ ok: false, reason: 'origin must be a non-empty string' })
  })

  it('writes the five fields as JSON in a fixed order, and nothing else', () => {
    const m = { ...message(3), extra: 1 } as CoherenceMessage
    expect(encodeWire(m)).toBe('{"table":"emoji_sets","id":"id-3","version":3,"kind":"invalidate","origin":"spec"}')
  })

  it('keeps 1 and "1" apart', () => {
    expect(decodeWire(encodeWire(message(1, { id: 1 })))).toEqual({ ok: true, message: message(1, { id: 1 }) })
    expect(decodeWire(encodeWire(message(1, { id: '1' })))).toEqual({ ok: true, message: message(1, { id: '1' }) })
  })

  it('reads -0 as 0', () => {
    expect(parseCoherenceMessage(message(1, { id: -0, version: -0 }))).toEqual({
      ok: true,
      message: message(1, { id: 0, version: 0 }),
    })
  })
})

describe('parseCoherenceMessage', () => {
  it('returns a fresh object with only the known fields, ignoring unknown keys', () => {
    const raw = { ...message(1), note: 'from a newer publisher' }
    const parsed = parseCoherenceMessage(raw)
    expect(parsed).toEqual({ ok: true, message: message(1) })
    expect(parsed.ok && parsed.message).not.toBe(raw)
  })

  it('accepts a null-prototype object', () => {
    expect(parseCoherenceMessage(Object.assign(Object.create(null), message(1))).ok).toBe(true)
  })

  it.each(['__proto__', 'constructor', 'prototype'])('rejects an own %s key', (key) => {
    const raw: Record<string, unknown> = { ...message(1) }
    Object.defineProperty(raw, key, { value: { polluted: true }, enumerable: true })
    expect(parseCoherenceMessage(raw)).toEqual({ ok: false, reason: `message has a forbidden key "${key}"` })
  })

  it('rejects what is not a plain object', () => {
    class Message {
      table = 't'
      id = 'x'
      version = 1
      kind = 'put'
      origin = 'o'
    }
    for (const raw of [null, undefined, 'x', 1, [message(1)], new Message(), Object.create(message(1)), new Map()]) {
      expect(parseCoherenceMessage(raw).ok).toBe(false)
    }
  })

  it('never reads a field from a polluted Object.prototype', () => {
    const { kind: _, ...withoutKind } = message(1)
    Object.defineProperty(Object.prototype, 'kind', { value: 'put', configurable: true, writable: true })
    try {
      expect(parseCoherenceMessage(withoutKind).ok).toBe(false)
    } finally {
      delete (Object.prototype as Record<string, unknown>).kind
    }
  })

  it('never throws, even on throwing getters and proxies', () => {
    const getter = { ...message(1) }
    Object.defineProperty(getter, 'version', {
      get() {
        throw new Error('boom')
      },
      enumerable: true,
    })
    const proxy = new Proxy(
      {},
      {
        getPrototypeOf() {
          throw new Error('boom')
        },
      },
    )
    expect(parseCoherenceMessage(getter)).toEqual({ ok: false, reason: 'message could not be read' })
    expect(parseCoherenceMessage(proxy)).toEqual({ ok: false, reason: 'message could not be read' })
  })

  it('carries every message with its fields at their limits (an id as long as a namespace key), even when every code unit takes 6 bytes of JSON', () => {
    for (const unit of ['i', '\u0001', '\ud800']) {
      const atLimits: CoherenceMessage = {
        space: unit.repeat(MAX_TABLE_LENGTH),
        table: unit.repeat(MAX_TABLE_LENGTH),
        id: unit.repeat(MAX_KEY_LENGTH),
        version: MAX_VERSION,
        kind: 'unfilled',
        origin: unit.repeat(MAX_ORIGIN_LENGTH),
        lease: unit.repeat(MAX_LEASE_LENGTH),
        failed: true,
      }
      expect(parseCoherenceMessage(atLimits)).toEqual({ ok: true, message: atLimits })
      const wire = encodeWire(atLimits, unit.repeat(MAX_TABLE_LENGTH))
      expect(Buffer.byteLength(wire)).toBeLessThanOrEqual(MAX_WIRE_BYTES)
      expect(decodeWire(wire)).toEqual({ ok: true, message: atLimits, namespace: unit.repeat(MAX_TABLE_LENGTH) })
    }
    expect(parseCoherenceMessage(message(1, { id: 'i'.repeat(MAX_KEY_LENGTH + 1) }))).toMatchObject({ ok: false })
  })
})

describe('decodeWire', () => {
  it.each(MALFORMED_PAYLOADS)('refuses %s', (_, payload) => {
    const decoded = decodeWire(payload)
    expect(decoded.ok).toBe(false)
    expect(!decoded.ok && decoded.reason).toMatch(/\w/)
  })

  it('reads a payload of exactly MAX_WIRE_BYTES and refuses one byte more, as string or Buffer', () => {
    const base = JSON.stringify({ ...message(1), pad: '' })
    const exact = JSON.stringify({ ...message(1), pad: 'p'.repeat(MAX_WIRE_BYTES - base.length) })
    const over = JSON.stringify({ ...message(1), pad: 'p'.repeat(MAX_WIRE_BYTES - base.length + 1) })
    expect(Buffer.byteLength(exact)).toBe(MAX_WIRE_BYTES)
    for (const payload of [exact, Buffer.from(exact)]) expect(decodeWire(payload)).toEqual({ ok: true, message: message(1) })
    for (const payload of [over, Buffer.from(over)]) {
      expect(decodeWire(payload)).toEqual({ ok: false, reason: `payload is larger than ${MAX_WIRE_BYTES} bytes` })
    }
  })

  it('measures a string payload in UTF-8 bytes', () => {
    const over = JSON.stringify({ ...message(1), pad: 'é'.repeat(MAX_WIRE_BYTES / 2) })
    expect(over.length).toBeLessThan(MAX_WIRE_BYTES)
    expect(decodeWire(over).ok).toBe(false)
  })

  it('leaves Object.prototype untouched by poisoned payloads', () => {
    for (const [, payload] of MALFORMED_PAYLOADS) decodeWire(payload)
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    expect(Object.getOwnPropertyNames(Object.prototype)).not.toContain('polluted')
  })
})

describe('a tag message and a clear on the wire', () => {
  const tag: CoherenceMessage = { table: 'stock', kind: 'tag', tag: 'depot:7', scope: [], version: 7, origin: 'o1', space: 'shop:' }
  const cleared: CoherenceMessage = { table: 'stock', kind: 'clear', scope: ['acme'], version: 7, origin: 'o1', space: 'shop:' }
  const clearedWhole: CoherenceMessage = { table: 'stock', kind: 'clear', origin: 'o1', space: 'shop:' }

  it('travel with taken: true when the publisher\u2019s L2 took them (minted the version; moved to a new generation), and without it otherwise', () => {
    for (const m of [tag, cleared, clearedWhole]) {
      expect(decodeWire(encodeWire(m))).toEqual({ ok: true, message: m })
      expect(JSON.parse(encodeWire(m))).not.toHaveProperty('taken')
      const taken = { ...m, taken: true } as CoherenceMessage
      expect(decodeWire(encodeWire(taken))).toEqual({ ok: true, message: taken })
      expect(parseCoherenceMessage({ ...m, taken: false })).toEqual({ ok: true, message: m })
      expect(parseCoherenceMessage({ ...m, taken: 'yes' })).toEqual({ ok: false, reason: 'taken must be a boolean when present' })
    }
  })
})

describe('the unfilled message on the wire', () => {
  const unfilled = { table: 'stock', id: 'hot', version: 7, kind: 'unfilled', origin: 'o1', lease: 'token-1' } as const

  it('travels with its lease token, and with failed: true when the holder’s loader failed', () => {
    expect(decodeWire(encodeWire(unfilled))).toEqual({ ok: true, message: unfilled })
    expect(decodeWire(encodeWire({ ...unfilled, failed: true }))).toEqual({ ok: true, message: { ...unfilled, failed: true } })
    expect(JSON.parse(encodeWire(unfilled))).not.toHaveProperty('failed')
  })

  it('carries its key space, as every other kind does, so a bus with a namespace hears its own holders', () => {
    expect(decodeWire(encodeWire({ ...unfilled, failed: true }, 'prod:'))).toEqual({ ok: true, message: { ...unfilled, failed: true }, namespace: 'prod:' })
  })

  it('reads failed: false as absent, and refuses a failed that is not a boolean, naming it', () => {
    expect(parseCoherenceMessage({ ...unfilled, failed: false })).toEqual({ ok: true, message: unfilled })
    expect(parseCoherenceMessage({ ...unfilled, failed: 'yes' })).toEqual({ ok: false, reason: 'failed must be a boolean when present' })
  })
})
