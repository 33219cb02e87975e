/**
 * An L2 call on a client that is not ready fails at once, whatever the client's settings; the one
 * exception is an ioredis connection EchoStore opened from a `url`, which holds the calls made before
 * its first connect: a put made at once after `redisL2({ url })` reaches Redis.
 */
import { Redis } from 'ioredis'
import { afterAll, expect, it } from 'vitest'
import { createTable } from '../src/index.js'
import { redisL2 } from '../src/redis.js'
import { REDIS_URL, cleanPrefix, describeRedis, testPrefix } from './support/redis.js'

describeRedis('a url EchoStore connects itself (ioredis installed)', () => {
  const prefix = testPrefix('first-calls')
  afterAll(async () => {
    const admin = new Redis(REDIS_URL)
    await cleanPrefix(admin, prefix)
    await admin.quit()
  })

  it('holds the calls made before its first connect: a put and a read made at once reach Redis', async () => {
    const l2 = redisL2({ url: REDIS_URL, prefix })
    const table = createTable<string>({ name: 'first', l2, closeStores: true })
    const put = table.put('a', 'written before the connect')
    expect(await put).toMatchObject({ applied: true, l2: 'written' })
    const other = redisL2({ url: REDIS_URL, prefix })
    const cold = createTable<string>({ name: 'first', l2: other, closeStores: true })
    expect(await cold.fetch('a', () => 'from origin')).toBe('written before the connect')
    expect(cold.stats()).toMatchObject({ l2_hits: 1, loads: 0, l2_errors: 0 })
    await Promise.all([table.close(), cold.close()])
  })
})
