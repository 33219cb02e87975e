/**
 * node-redis as a first-class client of the Redis L2 and bus, on one node: the L2 contract and the
 * bus contract on clients made by `createClient()` (RESP2 and RESP3), a client EchoStore never
 * closes, a call that fails fast while the client is offline whatever its settings, a gap after the
 * subscriber drops, and tables on ioredis and on node-redis sharing one L2 and one bus.
 */
import { once } from 'node:events'
import { Redis } from 'ioredis'
import { createClient } from 'redis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { BusDelivery } from '../src/bus/bus.js'
import { createTable } from '../src/index.js'
import { v8Codec } from '../src/l2/codec.js'
import { redisBus, redisL2 } from '../src/redis.js'
import { RedisUnreachableError } from '../src/core/errors.js'
import { busContract, message, recorder } from './bus-contract.js'
import { l2ContractSuite } from './l2-contract.js'
import { cleanPrefix, describeRedis, REDIS_URL, suiteRedis, testPrefix, redisKeyClock } from './support/redis.js'

const prefix = testPrefix('node-redis')

type NodeRedis = ReturnType<typeof createClient>

/** A connected node-redis client on `REDIS_URL` speaking `resp`, with an error listener (as the docs recommend). */
async function nodeRedisClient(resp: 2 | 3, name?: string): Promise<NodeRedis> {
  const client = createClient({ url: REDIS_URL, RESP: resp, ...(name === undefined ? {} : { name }) }) as NodeRedis
  client.on('error', () => {})
  await client.connect()
  return client
}

/** The connections named `name` now, of `type`, from CLIENT LIST. */
async function clientsNamed(admin: Redis, name: string, type: 'normal' | 'pubsub'): Promise<number> {
  const list = String(await admin.call('CLIENT', 'LIST', 'TYPE', type))
  return list.split('\n').filter((line) => line.includes(` name=${name} `)).length
}

describeRedis('node-redis clients', () => {
  const raw = suiteRedis(prefix)

  for (const resp of [2, 3] as const) {
    describe(`the L2Store contract on a createClient() client, RESP${resp}`, () => {
      let client: NodeRedis
      beforeAll(async () => {
        client = await nodeRedisClient(resp)
      })
      afterAll(async () => {
        await client.close()
      })
      l2ContractSuite(() => ({
        store: redisL2({ client, prefix }),
        ...redisKeyClock(raw, prefix),
        peer: () => redisL2({ client, prefix }),
      }))
    })

    describe(`the bus contract on createClient() clients, RESP${resp}`, () => {
      busContract(async () => {
        const channel = testPrefix('bus')
        const name = `${channel.replaceAll(':', '-')}nr${resp}`
        const clients = [await nodeRedisClient(resp, name), await nodeRedisClient(resp, name)] as const
        const [a, b] = [redisBus({ client: clients[0], channel }), redisBus({ client: clients[1], channel })]
        await Promise.all([a.subscribed(), b.subscribed()])
        return {
          a,
          b,
          raw: async (payload) => void (await raw().publish(channel, payload)),
          // Only the subscribers are the buses' own: the given clients stay open until dispose.
          connections: async () => {
            let n = await clientsNamed(raw(), name, 'pubsub')
            for (let i = 0; i < 100 && n !== 0; i++) n = await clientsNamed(raw(), name, 'pubsub')
            return n
          },
          dispose: async () => {
            // The given clients were left open by close(): they still answer.
            expect(await Promise.all(clients.map((c) => c.ping()))).toEqual(['PONG', 'PONG'])
            await Promise.all(clients.map((c) => c.close()))
          },
        }
      })
    })
  }

  it('reads a binary codec back as the bytes written (entries cross as Buffers, whatever the client maps)', async () => {
    const client = await nodeRedisClient(3)
    const store = redisL2({ client, prefix, codec: v8Codec })
    const value = new Map<string, unknown>([
      ['at', new Date(0)],
      ['n', 10n],
      ['bytes', new Uint8Array([0, 255, 128])],
    ])
    await store.set('binary', 'a', { kind: 'value', value, version: 1, ttl: 5_000 })
    expect((await store.get('binary', 'a'))?.value).toEqual(value)
    await store.close()
    await client.close()
  })

  it('fails an L2 call at once while the client is offline, whatever its offline queue, and says which host and why', async () => {
    // Nothing listens on port 1: the client keeps reconnecting, its offline queue on (node-redis's default).
    const client = createClient({ socket: { host: '127.0.0.1', port: 1, reconnectStrategy: () => 50 } })
    const errors: unknown[] = []
    client.on('error', (error) => errors.push(error))
    client.connect().catch(() => {})
    const store = redisL2({ client, prefix })
    const error = await store.get('offline', 'a').then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(RedisUnreachableError)
    expect((error as Error).message).toMatch(/^echostore: redisL2: 127\.0\.0\.1:1 did not answer/)
    await store.close()
    client.destroy()
  })

  it('answers every fetch from its loader while node-redis cannot reach Redis', async () => {
    const client = createClient({ socket: { host: '127.0.0.1', port: 1, reconnectStrategy: () => 50 } })
    client.on('error', () => {})
    client.connect().catch(() => {})
    const l2 = redisL2({ client, prefix })
    const table = createTable<string, string>({ name: 'offline', l2, jitter: 0 })
    const answers = await Promise.all(['a', 'b', 'c'].map((id) => table.fetch(id, async () => `loaded ${id}`)))
    expect(answers).toEqual(['loaded a', 'loaded b', 'loaded c'])
    await table.close()
    await l2.close()
    client.destroy()
  })

  it('never closes the client it was given: the L2 and the bus close only their own connections', async () => {
    const client = await nodeRedisClient(3)
    const l2 = redisL2({ client, prefix })
    const bus = redisBus({ client, channel: testPrefix('own') })
    await bus.subscribed()
    await l2.set('own', 'a', { kind: 'value', value: 1, version: 1, ttl: 5_000 })
    await bus.close()
    await l2.close()
    expect(client.isReady).toBe(true)
    expect(await client.ping()).toBe('PONG')
    await client.close()
  })

  it('delivers a gap once the subscriber connection is back after it was killed, then delivery resumes', async () => {
    const channel = testPrefix('gap')
    const name = `${channel.replaceAll(':', '-')}gap`
    const client = await nodeRedisClient(2, name)
    const bus = redisBus({ client, channel })
    await bus.subscribed()
    const heard = recorder()
    bus.subscribe(heard.handler)
    const [subscriber] = String(await raw().call('CLIENT', 'LIST', 'TYPE', 'pubsub'))
      .split('\n')
      .filter((line) => line.includes(` name=${name} `))
      .map((line) => /\bid=(\d+)/.exec(line)![1]!)
    await raw().call('CLIENT', 'KILL', 'ID', subscriber!)
    await heard.until((d) => d.some((x) => x.type === 'gap'))
    await bus.publish(message(1))
    await heard.until((d) => d.some((x) => x.type === 'message'))
    expect(heard.deliveries.map((d: BusDelivery) => d.type)).toEqual(['gap', 'message'])
    await bus.close()
    await client.close()
  })

  it('shares L2 entries and bus messages between a table on ioredis and a table on node-redis', async () => {
    const shared = testPrefix('mixed')
    const ioClient = new Redis(REDIS_URL)
    await once(ioClient, 'ready') // a given client is used once ready, as the node-redis one is once connected
    const nrClient = await nodeRedisClient(3)
    const [ioL2, nrL2] = [redisL2({ client: ioClient, prefix: shared, timeout: 1_000 }), redisL2({ client: nrClient, prefix: shared, timeout: 1_000 })]
    const [ioBus, nrBus] = [redisBus({ client: ioClient, namespace: shared }), redisBus({ client: nrClient, namespace: shared })]
    await Promise.all([ioBus.subscribed(), nrBus.subscribed()])
    const onIoredis = createTable<{ n: number }, string>({ name: 'mixed', l2: ioL2, bus: ioBus, jitter: 0 })
    const onNodeRedis = createTable<{ n: number }, string>({ name: 'mixed', l2: nrL2, bus: nrBus, jitter: 0 })

    // A fill written through ioredis is an L2 hit through node-redis, and the other way round.
    expect(await onIoredis.fetch('a', async () => ({ n: 1 }))).toEqual({ n: 1 })
    expect(await onNodeRedis.fetch('a', async () => ({ n: -1 }))).toEqual({ n: 1 })
    expect(await onNodeRedis.fetch('b', async () => ({ n: 2 }))).toEqual({ n: 2 })
    expect(await onIoredis.fetch('b', async () => ({ n: -2 }))).toEqual({ n: 2 })

    // A change made on one is heard by the other: its next fetch sees the new version.
    const heardByNodeRedis = recorder()
    nrBus.subscribe(heardByNodeRedis.handler)
    await onIoredis.put('a', { n: 10 })
    await heardByNodeRedis.until((d) => d.some((x) => x.type === 'message' && 'id' in x.message && x.message.id === 'a'))
    expect(await onNodeRedis.fetch('a', async () => ({ n: -10 }))).toEqual({ n: 10 })
    const heardByIoredis = recorder()
    ioBus.subscribe(heardByIoredis.handler)
    await onNodeRedis.put('b', { n: 20 })
    await heardByIoredis.until((d) => d.some((x) => x.type === 'message' && 'id' in x.message && x.message.id === 'b'))
    expect(await onIoredis.fetch('b', async () => ({ n: -20 }))).toEqual({ n: 20 })

    await Promise.all([onIoredis.close(), onNodeRedis.close()])
    await Promise.all([ioBus.close(), nrBus.close(), ioL2.close(), nrL2.close()])
    await cleanPrefix(ioClient, shared)
    await ioClient.quit()
    await nrClient.close()
  })
})
