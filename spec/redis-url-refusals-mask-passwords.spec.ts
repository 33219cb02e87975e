/**
 * A `url` that `redisL2` or `redisBus` refuses is shown in the TypeError, so the caller sees what was
 * wrong, with its password masked (messages end up in logs): the entry at fault in an array is
 * named, and a redis:// URL that does not parse is refused the same way, not with Node's own
 * `Invalid URL` error (which carries the whole URL, password included, as `input`). Nothing connects.
 */
import { describe, expect, it } from 'vitest'
import { redisBus, redisL2 } from '../src/redis.js'
import { refusal } from './support/refusal.js'

const RULE = 'must be a redis:// or rediss:// URL (redis://[user:password@]host:port[/db]), or a non-empty array of them'

describe('a refused url', () => {
  it('is shown with its password masked, by redisL2 and redisBus', () => {
    const cases = [
      ['http://app:hunter2@cache.internal:6379', '"http://app:***@cache.internal:6379"'],
      ['redis:/app:hunter2@cache.internal:6379', '"redis:/app:***@cache.internal:6379"'],
      ['redis://:hunter2@bad host', '"redis://:***@bad host"'],
      ['redis://hunter2@bad host', '"redis://***@bad host"'],
      ['cache.internal:6379', '"cache.internal:6379"'],
    ] as const
    for (const make of [redisL2, redisBus] as const) {
      const adapter = make === redisL2 ? 'redisL2' : 'redisBus'
      for (const [url, shown] of cases) {
        const error = refusal(() => make({ url }))
        expect(error).toBeInstanceOf(TypeError)
        expect(error.code).toBe('ECHOSTORE_BAD_ARGUMENT')
        expect(error.message).toBe(`echostore: ${adapter}: the option \`url\` ${RULE}, got ${shown}`)
        expect(JSON.stringify({ ...error, message: error.message })).not.toContain('hunter2')
      }
    }
  })

  it('in an array names its entry', () => {
    const error = refusal(() => redisBus({ url: ['redis://a:6379', 'redis//app:hunter2@b:6379'] }))
    expect(error).toBeInstanceOf(TypeError)
    expect(error.message).toBe(`echostore: redisBus: the option \`url\` (its entry 1) ${RULE}, got "redis//app:***@b:6379"`)
    expect(refusal(() => redisL2({ url: [] })).message).toBe(`echostore: redisL2: the option \`url\` ${RULE}, got an array`)
  })
})

describe('a url whose password holds a malformed percent escape', () => {
  it('is refused as a bad url option, its password masked, by redisL2 and redisBus', () => {
    for (const make of [redisL2, redisBus] as const) {
      const error = refusal(() => make({ url: 'redis://app:s3cr%ZZet@127.0.0.1:6379' } as never))
      expect(error).toBeInstanceOf(TypeError)
      expect(error.code).toBe('ECHOSTORE_BAD_ARGUMENT')
      expect(error.message).toContain('"redis://app:***@127.0.0.1:6379"')
      expect(error.message).not.toContain('s3cr')
    }
  })
})
