/**
 * "Tables and the stores and buses EchoStore makes (`memoryL2`, `localBus`, `redisL2`, `redisBus`)
 * have `[Symbol.asyncDispose]`, so `await using` closes them at the end of a scope." The in-process
 * half is in dispose.spec.ts; here the Redis store and bus, at run time.
 */
import { expect, it } from 'vitest'
import { BusClosedError, L2ClosedError } from '../src/index.js'
import { type RedisBus, type RedisL2, redisBus, redisL2 } from '../src/redis.js'
import { describeRedis, REDIS_URL, suiteRedis, testPrefix } from './support/redis.js'

const prefix = testPrefix('await-using')
const message = { table: 't', id: 'a', version: 1, kind: 'invalidate', origin: 'elsewhere' } as const

describeRedis('await using on the Redis store and bus', () => {
  suiteRedis(prefix)

  it('closes each at the end of its block: calls made afterwards are refused as after close()', async () => {
    let store: RedisL2 | undefined
    let bus: RedisBus | undefined
    {
      await using l2 = redisL2({ url: REDIS_URL, prefix, timeout: 1_000 })
      await using channel = redisBus({ url: REDIS_URL, channel: `${prefix}bus` })
      store = l2
      bus = channel
      expect(await l2.get('t', 'a')).toBeUndefined()
    }
    await expect(store.get('t', 'a')).rejects.toBeInstanceOf(L2ClosedError)
    await expect(bus.publish(message)).rejects.toBeInstanceOf(BusClosedError)
  })
})
