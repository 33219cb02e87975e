/**
 * `put`: "A value L2 will not hold (larger than its `maxValueBytes`, or not encodable) leaves a
 * tombstone there at the change's version, so no process reads the value it replaced." The too-large
 * half is in l2-garbage.spec.ts; here the value the codec cannot encode (a BigInt under JSON).
 */
import { expect, it } from 'vitest'
import { createTable } from '../src/index.js'
import { redisL2 } from '../src/redis.js'
import { describeRedis, REDIS_URL, suiteRedis, testPrefix } from './support/redis.js'

const prefix = testPrefix('put-unencodable')

describeRedis('a put of a value the codec cannot encode', () => {
  suiteRedis(prefix)

  it('leaves a tombstone in L2 at the put’s version: a cold process loads from the origin, never the value it replaced', async () => {
    const l2 = redisL2({ url: REDIS_URL, prefix, timeout: 1_000 })
    const [a, b, cold] = [0, 1, 2].map(() => createTable<unknown>({ name: 'enc', l2 }))
    expect(await b!.fetch('p', () => 'replaced')).toBe('replaced')
    expect(await l2.get('enc', 'p')).toMatchObject({ kind: 'value', value: 'replaced' })
    const put = await a!.put('p', { n: 1n })
    expect(put).toMatchObject({ applied: true, l2: 'written' })
    expect(a!.stats()).toMatchObject({ l2_codec_errors: 1, l2_errors: 0 })
    expect(a!.peek('p')).toEqual({ n: 1n }) // this process holds the value itself
    expect(await l2.get('enc', 'p')).toMatchObject({ kind: 'tombstone', version: put.version })
    expect(await cold!.fetch('p', () => 'from origin')).toBe('from origin')
    await Promise.all([a!.close(), b!.close(), cold!.close()])
    await l2.close()
  })
})
