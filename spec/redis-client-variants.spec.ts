/**
 * The Redis L2 on the clients a service may already hold, set up its own way: one ioredis client
 * shared by two copies of the package (two releases under `node_modules`), each running its own
 * scripts; and clients that map integer replies to strings (ioredis's `stringNumbers`, a node-redis
 * type mapping), whose writes, leases and generation answers read as they do on any client.
 */
import { once } from 'node:events'
import { Redis } from 'ioredis'
import { RESP_TYPES, createClient } from 'redis'
import { afterAll, describe, expect, it } from 'vitest'
import { script } from '../src/redis/driver.js'
import { ioredisDriver } from '../src/redis/ioredis-driver.js'
import { type RedisL2, redisL2 } from '../src/redis/l2.js'
import { REDIS_URL, describeRedis, suiteRedis, testPrefix } from './support/redis.js'

const prefix = testPrefix('client-variants')
const entry = (value: string, version: number) => ({ kind: 'value', value, version, ttl: 60_000 }) as const

describeRedis('the Redis L2 on clients set up their own way', () => {
  suiteRedis(prefix)
  const closers: (() => unknown)[] = []
  afterAll(async () => {
    for (const close of closers.reverse()) await close()
  })

  /** A ready ioredis client, disconnected after the suite. */
  async function ioredis(options: { stringNumbers?: boolean } = {}): Promise<Redis> {
    const client = new Redis(REDIS_URL, options)
    closers.push(() => client.disconnect())
    await once(client, 'ready')
    return client
  }

  it('two copies of the package sharing one ioredis client each run their own script of a name', async () => {
    const shared = await ioredis()
    // The same script of two releases: one name, other texts.
    const mine = script('echostoreL2Get', "return 'this release'", 1)
    const theirs = script('echostoreL2Get', "return 'another release'", 1)
    const key = `${prefix}k`
    const ours = ioredisDriver(shared)
    expect(await ours.run({ script: mine, keys: [key], args: [] })).toBe('this release')
    expect(await ioredisDriver(shared).run({ script: theirs, keys: [key], args: [] })).toBe('another release')
    expect(await ours.run({ script: mine, keys: [key], args: [] })).toBe('this release')
    expect(mine.name).not.toBe(theirs.name)
  })

  const mapping: [string, () => Promise<unknown>][] = [
    ['ioredis with stringNumbers', () => ioredis({ stringNumbers: true })],
    [
      'node-redis mapping numbers to strings',
      async () => {
        const client = createClient({ url: REDIS_URL, RESP: 3 }).withTypeMapping({ [RESP_TYPES.NUMBER]: String })
        await client.connect()
        closers.push(() => client.close())
        return client
      },
    ],
  ]
  describe.each(mapping)('on %s', (name, make) => {
    it('a write reports it landed, a store that did not see a clear reads and writes the new generation, and a lease is taken', async () => {
      const table = `t-${name.replace(/\W+/g, '-')}`
      const other: RedisL2 = redisL2({ client: await ioredis(), prefix })
      const store: RedisL2 = redisL2({ client: (await make()) as never, prefix })
      closers.push(
        () => store.close(),
        () => other.close(),
      )
      expect(await store.set(table, 'a', entry('before', 1))).toBe(true)
      expect((await store.get(table, 'a'))?.value).toBe('before')
      await other.clear(table)
      await other.set(table, 'a', entry('after', 2))
      expect((await store.get(table, 'a'))?.value).toBe('after')
      expect(await store.set(table, 'a', entry('mine', 3))).toBe(true)
      expect((await other.get(table, 'a'))?.value).toBe('mine')
      expect((await store.leases!.readOrAcquire!(table, 'b', 'token', 5_000, 0)).lease).toBe('taken')
      expect(await store.leases!.release(table, 'b', 'token')).toBe(true)
    })
  })
})
