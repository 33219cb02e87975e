import { afterEach, describe, expect, it } from 'vitest'
import { jsonCodec, v8Codec } from '../src/l2/codec.js'

const bytes = (text: string): Buffer => Buffer.from(text, 'utf8')
const asBuffer = (payload: Buffer | string): Buffer => (typeof payload === 'string' ? bytes(payload) : payload)

describe('jsonCodec', () => {
  afterEach(() => {
    // Belt and braces: if a decode ever polluted the prototype, the next tests must not inherit it.
    delete (Object.prototype as Record<string, unknown>).polluted
  })

  it.each([
    ['__proto__', '{"__proto__":{"polluted":1}}'],
    ['nested constructor.prototype', '{"a":{"b":[{"constructor":{"prototype":{"polluted":1}}}]}}'],
    ['an escaped __proto__', '{"\\u005f\\u005fproto\\u005f\\u005f":{"polluted":1}}'],
    ['an escaped constructor.prototype', '{"\\u0063onstructor":{"\\u0070rototype":{"polluted":1}}}'],
  ])('rejects a payload holding %s and pollutes nothing', (_label, text) => {
    expect(() => jsonCodec.decode(bytes(text))).toThrow(SyntaxError)
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    expect(Object.prototype).not.toHaveProperty('polluted')
  })

  it.each([
    ['an own __proto__ key (as JSON.parse of outside data gives)', JSON.parse('{"__proto__":{"admin":true},"name":"x"}')],
    ['a nested constructor.prototype', { a: [{ constructor: { prototype: { polluted: 1 } } }] }],
  ])('refuses to encode a value holding %s: decode would refuse it, every time it was read', (_label, value) => {
    expect(() => jsonCodec.encode(value)).toThrow(SyntaxError)
  })

  it('round-trips ordinary data holding a constructor or a prototype key: only keys that can pollute are refused', () => {
    for (const value of [{ constructor: 'Ford Motor Co' }, { prototype: { draft: 2 } }, { constructor: { name: 'x' } }, [{ constructor: 7 }]]) {
      expect(jsonCodec.decode(asBuffer(jsonCodec.encode(value)))).toEqual(value)
    }
    expect(jsonCodec.decode(bytes('{"\\u0063onstructor":{"polluted":1}}'))).toEqual({ constructor: { polluted: 1 } })
    expect(Object.prototype).not.toHaveProperty('polluted')
  })

  it('accepts the forbidden words as values and inside longer keys', () => {
    const value = { name: 'constructor', note: '__proto__ prototype', myconstructor: 1, proto: ['prototype'], esc: '\u00e9' }
    expect(jsonCodec.decode(asBuffer(jsonCodec.encode(value)))).toEqual(value)
    expect(jsonCodec.decode(bytes('{"k":"\\u0041"}'))).toEqual({ k: 'A' })
  })

  it('rejects malformed JSON', () => {
    expect(() => jsonCodec.decode(bytes('{"a":'))).toThrow(SyntaxError)
  })

  it('carries undefined losslessly as the empty payload, and null as null', () => {
    expect(jsonCodec.encode(undefined)).toBe('')
    expect(jsonCodec.decode(Buffer.alloc(0))).toBeUndefined()
    expect(jsonCodec.decode(asBuffer(jsonCodec.encode(null)))).toBeNull()
  })

  it('refuses to encode what JSON cannot carry', () => {
    expect(() => jsonCodec.encode(() => 1)).toThrow(TypeError)
    expect(() => jsonCodec.encode(Symbol('s'))).toThrow(TypeError)
    expect(() => jsonCodec.encode(1n)).toThrow(TypeError)
  })

  it('round-trips unicode as UTF-8', () => {
    const value = { s: 'ünï 🎉 \u0000 "q"' }
    const payload = jsonCodec.encode(value)
    expect(jsonCodec.decode(asBuffer(payload))).toEqual(value)
  })
})

describe('v8Codec', () => {
  it('round-trips Map, Set, Date, BigInt, undefined and cycles', () => {
    const value: Record<string, unknown> = { map: new Map([[1, 'one']]), set: new Set(['a']), when: new Date(5), big: -(2n ** 80n), u: undefined }
    value.self = value
    const back = v8Codec.decode(asBuffer(v8Codec.encode(value))) as typeof value
    expect(back.map).toEqual(new Map([[1, 'one']]))
    expect(back.set).toEqual(new Set(['a']))
    expect(back.when).toEqual(new Date(5))
    expect(back.big).toBe(-(2n ** 80n))
    expect('u' in back && back.u === undefined).toBe(true)
    expect(back.self).toBe(back)
    expect(v8Codec.decode(asBuffer(v8Codec.encode(undefined)))).toBeUndefined()
  })

  it('throws on a payload that does not deserialise', () => {
    expect(() => v8Codec.decode(Buffer.from([0xff, 0x0f, 0x6f, 0x22]))).toThrow()
  })
})
