import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { Id } from '../src/core/id.js'
import { l2Key, versionKey } from '../src/l2/keys.js'

/** Strings that stress the layout: separators, quotes, brackets, braces, escapes and JSON look-alikes. */
const tricky = fc.oneof(
  fc.string({ unit: fc.constantFrom(':', '"', '\\', '[', ']', '{', '}', ',', '1', 'a', 'v', ' ', 'é', '🎉'), maxLength: 8 }),
  fc.string({ unit: 'binary', maxLength: 6 }),
  fc.constantFrom('', '1', '"1"', 'a:b', 'b:c', '["a",1]', '{x}', ':v', '}:v', '["t","1"]'),
)

/** Ids: strings (often numeric-looking) and finite numbers, so `1` meets `'1'`. */
const id: fc.Arbitrary<Id> = fc.oneof(
  tricky,
  fc.integer({ min: -3, max: 3 }),
  fc.integer({ min: -3, max: 3 }).map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map(String),
)

/** Prefixes are written verbatim as UTF-8, so they must be well-formed (redisL2 refuses lone surrogates). */
const prefix = fc.oneof(fc.string({ unit: fc.constantFrom(':', '{', '}', '[', '"', 'x', '*'), maxLength: 5 }), fc.string({ unit: 'grapheme', maxLength: 4 }))

const triple = fc.tuple(prefix, tricky, id)

/** The identity of a triple: 0 and -0 are one id (as in a Map and in JSON); 1 and '1' are not. */
const identity = ([p, t, i]: [string, string, Id]): string => JSON.stringify([p, t, typeof i, i])

/** What Redis compares: the key's UTF-8 bytes. */
const bytes = (key: string): string => Buffer.from(key, 'utf8').toString('hex')

describe('L2 key layout', () => {
  it('distinct (prefix, table, id) triples never share a data key or a version key', () => {
    fc.assert(
      fc.property(triple, triple, (a, b) => {
        fc.pre(identity(a) !== identity(b))
        expect(bytes(l2Key(...a))).not.toBe(bytes(l2Key(...b)))
        expect(bytes(versionKey(...a))).not.toBe(bytes(versionKey(...b)))
      }),
      { numRuns: 5_000 },
    )
  })

  it('decodes one way only: no other split of a key into prefix + encoding is valid', () => {
    const parse = (json: string): unknown => {
      try {
        return JSON.parse(json)
      } catch {
        return undefined
      }
    }
    /** Every (table, id) a key tail encodes exactly as l2Key would write it (`{[bucket,table]}` + the id's JSON + suffix). */
    const decodeTail = (tail: string, suffix: string): [string, Id][] => {
      if (!tail.startsWith('{') || !tail.endsWith(suffix)) return []
      const body = tail.slice(1, tail.length - suffix.length)
      const found: [string, Id][] = []
      for (let close = body.indexOf('}'); close >= 0; close = body.indexOf('}', close + 1)) {
        const pair = parse(body.slice(0, close))
        const id = parse(body.slice(close + 1))
        if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[1] !== 'string') continue
        if (typeof id !== 'string' && typeof id !== 'number') continue
        if (l2Key('', pair[1], id) === `{${body}`) found.push([pair[1], id])
      }
      return found
    }
    fc.assert(
      fc.property(triple, ([p, t, i]) => {
        for (const [key, suffix] of [
          [l2Key(p, t, i), ''],
          [versionKey(p, t, i), ':v'],
        ] as const) {
          let splits = 0
          for (let cut = 0; cut <= key.length; cut++) {
            for (const decoded of decodeTail(key.slice(cut), suffix)) {
              splits++
              expect(cut).toBe(p.length)
              expect(identity([key.slice(0, cut), ...decoded])).toBe(identity([p, t, i]))
            }
          }
          expect(splits).toBe(1)
        }
      }),
      { numRuns: 3_000 },
    )
  })

  it('a data key never equals a version key, of the same triple or another', () => {
    fc.assert(
      fc.property(triple, triple, (a, b) => {
        expect(bytes(l2Key(...a))).not.toBe(bytes(versionKey(...b)))
        expect(bytes(l2Key(...a))).not.toBe(bytes(versionKey(...a)))
      }),
      { numRuns: 5_000 },
    )
  })

  it('collides on none of the hand-picked near misses', () => {
    const pairs: [[string, string, Id], [string, string, Id]][] = [
      [
        ['p:', 'a:b', 'c'],
        ['p:', 'a', 'b:c'],
      ],
      [
        ['p:', 't', 1],
        ['p:', 't', '1'],
      ],
      [
        ['p', ':t', 1],
        ['p:', 't', 1],
      ],
      [
        ['p:', 't', 1.5],
        ['p:', 't', '1.5'],
      ],
      [
        ['', 'a', 'b'],
        ['', 'a","b', ''],
      ],
      [
        ['x{', 't', 1],
        ['x', '{t', 1],
      ],
    ]
    for (const [a, b] of pairs) {
      expect(l2Key(...a)).not.toBe(l2Key(...b))
      expect(versionKey(...a)).not.toBe(versionKey(...b))
    }
  })

  it('starts every key with the prefix verbatim', () => {
    fc.assert(
      fc.property(triple, ([p, t, i]) => {
        expect(l2Key(p, t, i).startsWith(p)).toBe(true)
        expect(versionKey(p, t, i).startsWith(p)).toBe(true)
      }),
    )
  })

  it('refuses ids that are not a string or a finite number, and non-string tables', () => {
    expect(() => l2Key('p', 't', Number.NaN)).toThrow(TypeError)
    expect(() => l2Key('p', 't', Infinity)).toThrow(TypeError)
    expect(() => l2Key('p', 't', {} as never)).toThrow(TypeError)
    expect(() => l2Key('p', 1 as never, 'x')).toThrow(TypeError)
  })
})
