/**
 * What a table does with L2 keys that hold garbage, values L2 will not hold, and ordinary data that
 * looks dangerous: corruption of one key is that key's problem (counted, repaired by the next
 * write, never an outage), a value too large or not encodable is counted apart from L2 errors and
 * answered from the loader, and `{ constructor: 'Ford Motor Co' }` is an ordinary L2 hit.
 */
import { expect, it } from 'vitest'
import { BREAKER_FAILURES } from '../src/limits.js'
import { createTable } from '../src/index.js'
import { redisL2 } from '../src/redis.js'
import { l2Key, versionKey } from '../src/l2/keys.js'
import { describeRedis, REDIS_URL, suiteRedis, testPrefix } from './support/redis.js'

const prefix = testPrefix('l2-garbage')
/** A generous bound per call: these tests are about what L2 holds, not about its timeout. */
const SLACK = 1_000

describeRedis('garbage, unfit values and dangerous-looking data in a Redis L2', () => {
  const raw = suiteRedis(prefix)

  it('keys of another type or with a garbage header are corrupt misses: counted, never an outage, repaired by the fill', async () => {
    const l2 = redisL2({ url: REDIS_URL, prefix, timeout: SLACK })
    const table = createTable<string>({ name: 'wrongtype', l2 })
    const ids = Array.from({ length: BREAKER_FAILURES + 1 }, (_, i) => `g${i}`)
    for (const [i, id] of ids.entries()) {
      const key = l2Key(prefix, 'wrongtype', id)
      if (i % 2 === 0) await raw().rpush(key, 'not', 'an', 'entry')
      else await raw().set(key, 'no header at all', 'PX', 60_000)
    }
    for (const id of ids) expect(await table.fetch(id, () => `loaded ${id}`)).toBe(`loaded ${id}`)
    expect(table.stats()).toMatchObject({ l2_corrupt: ids.length, l2_errors: 0, l2_skipped: 0, loads: ids.length })
    // The fills replaced the garbage: another table reads them as hits.
    const other = createTable<string>({ name: 'wrongtype', l2 })
    for (const id of ids) expect(await other.fetch(id, () => 'never')).toBe(`loaded ${id}`)
    expect(other.stats()).toMatchObject({ l2_hits: ids.length, loads: 0 })
    await Promise.all([table.close(), other.close()])
    await l2.close()
  })

  it('a garbage version key never fails a put: the mint replaces it', async () => {
    const l2 = redisL2({ url: REDIS_URL, prefix, timeout: SLACK })
    const table = createTable<string>({ name: 'badversion', l2 })
    await raw().set(versionKey(prefix, 'badversion', 'k'), 'garbage')
    const first = await table.put('k', 'v1')
    expect(first).toMatchObject({ applied: true, l2: 'written' })
    await raw().del(versionKey(prefix, 'badversion', 'k'))
    await raw().hset(versionKey(prefix, 'badversion', 'k'), 'a', '1')
    const second = await table.put('k', 'v2')
    expect(second).toMatchObject({ applied: true, l2: 'written' })
    expect(second.version).toBeGreaterThan(first.version)
    expect(table.stats()).toMatchObject({ l2_errors: 0 })
    await table.close()
    await l2.close()
  })

  it('a value larger than maxValueBytes is answered from the loader, counted l2_oversize, and never read back', async () => {
    const l2 = redisL2({ url: REDIS_URL, prefix, timeout: SLACK, maxValueBytes: 1_000 })
    const [a, b] = [createTable<string>({ name: 'big', l2 }), createTable<string>({ name: 'big', l2 })]
    const big = 'x'.repeat(5_000)
    expect(await a.fetch('k', () => big)).toBe(big)
    expect(a.stats()).toMatchObject({ l2_oversize: 1, l2_errors: 0 })
    expect(await raw().exists(l2Key(prefix, 'big', 'k'))).toBe(0)
    // A put of a value too large leaves a tombstone in L2, so no process reads the value it replaced.
    expect(await b.fetch('p', () => 'small')).toBe('small')
    expect(await a.put('p', big)).toMatchObject({ applied: true, l2: 'written' })
    expect(await raw().getrange(l2Key(prefix, 'big', 'p'), 0, 0)).toBe('t')
    const c = createTable<string>({ name: 'big', l2 })
    expect(await c.fetch('p', () => 'from origin')).toBe('from origin')
    await Promise.all([a.close(), b.close(), c.close()])
    await l2.close()
  })

  it('a value the codec cannot encode is counted l2_codec_errors, not l2_errors, and the fetch answers it', async () => {
    const l2 = redisL2({ url: REDIS_URL, prefix, timeout: SLACK })
    const table = createTable<{ n: bigint }>({ name: 'codec', l2 })
    expect(await table.fetch('k', () => ({ n: 1n }))).toEqual({ n: 1n })
    expect(table.stats()).toMatchObject({ l2_codec_errors: 1, l2_errors: 0, l2_skipped: 0 })
    await table.close()
    await l2.close()
  })

  it('{ constructor: "Ford Motor Co" } is an ordinary value: one load, then an L2 hit', async () => {
    const l2 = redisL2({ url: REDIS_URL, prefix, timeout: SLACK })
    const [a, b] = [createTable<object>({ name: 'ford', l2 }), createTable<object>({ name: 'ford', l2 })]
    let loads = 0
    const loader = () => (loads++, { constructor: 'Ford Motor Co', founded: 1903 })
    expect(await a.fetch('F', loader)).toEqual({ constructor: 'Ford Motor Co', founded: 1903 })
    expect(await b.fetch('F', loader)).toEqual({ constructor: 'Ford Motor Co', founded: 1903 })
    expect(loads).toBe(1)
    expect(b.stats()).toMatchObject({ l2_hits: 1, l2_corrupt: 0 })
    await Promise.all([a.close(), b.close()])
    await l2.close()
  })
})
