import { createServer, type AddressInfo } from 'node:net'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { BusDelivery } from '../src/bus/bus.js'
import { DEFAULT_CHANNEL, redisBus, type RedisBus } from '../src/redis/bus.js'
import { RedisUnreachableError } from '../src/index.js'
import { REDIS_URL, describeRedis, testPrefix } from './support/redis.js'
import { busContract, message, recorder } from './bus-contract.js'

let admin: Redis

/** A full garbage collection, reached through V8's flags (vitest runs without --expose-gc). */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc')
  ;(runInNewContext('gc') as () => void)()
}

/** A TCP port nobody listens on (bound, read, released). */
async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

/** A URL whose connections carry `name`, so the spec can find them in CLIENT LIST. */
function namedUrl(name: string): string {
  const url = new URL(REDIS_URL)
  url.searchParams.set('connectionName', name)
  return url.toString()
}

/** The connections named `name` now, from CLIENT LIST. */
async function clientsNamed(name: string, type: 'normal' | 'pubsub' | 'all' = 'all'): Promise<{ id: string }[]> {
  const list = type === 'all' ? await admin.call('CLIENT', 'LIST') : await admin.call('CLIENT', 'LIST', 'TYPE', type)
  return String(list)
    .split('\n')
    .map((line) => Object.fromEntries(line.split(' ').map((field) => field.split('=', 2) as [string, string])))
    .filter((fields) => fields.name === name)
    .map((fields) => ({ id: fields.id as string }))
}

/** Closes connections after the server has seen QUIT; bounded by round trips, not time. */
async function eventually(count: () => Promise<number>): Promise<number> {
  let n = await count()
  for (let i = 0; i < 100 && n !== 0; i++) n = await count()
  return n
}

describeRedis('redisBus', () => {
  beforeAll(() => {
    admin = new Redis(REDIS_URL)
  })
  afterAll(async () => {
    await admin.quit()
  })

  describe('the bus contract, buses opened from a url', () => {
    busContract(async () => {
      const channel = testPrefix('bus')
      const name = `${channel.replaceAll(':', '-')}url`
      const [a, b] = [redisBus({ url: namedUrl(name), channel }), redisBus({ url: namedUrl(name), channel })]
      await Promise.all([a.subscribed(), b.subscribed()])
      return {
        a,
        b,
        raw: async (payload) => void (await admin.publish(channel, payload)),
        connections: async () => eventually(async () => (await clientsNamed(name)).length),
      }
    })
  })

  describe('the bus contract, buses on given clients', () => {
    busContract(async () => {
      const channel = testPrefix('bus')
      const name = `${channel.replaceAll(':', '-')}client`
      const clients = [new Redis(namedUrl(name)), new Redis(namedUrl(name))] as const
      const [a, b] = [redisBus({ client: clients[0], channel }), redisBus({ client: clients[1], channel })]
      await Promise.all([a.subscribed(), b.subscribed()])
      return {
        a,
        b,
        raw: async (payload) => void (await admin.publish(channel, payload)),
        // Only the subscribers are the buses' own: the given clients stay open until dispose.
        connections: async () => eventually(async () => (await clientsNamed(name, 'pubsub')).length),
        dispose: async () => {
          // The given clients were left open by close(): they still answer.
          expect(await Promise.all(clients.map((c) => c.ping()))).toEqual(['PONG', 'PONG'])
          await Promise.all(clients.map((c) => c.quit()))
        },
      }
    })
  })

  describe('losing the subscriber connection', () => {
    /** Kills the bus's subscriber connection from outside, as a network failure would. */
    async function killSubscriber(name: string): Promise<void> {
      const subscribers = await clientsNamed(name, 'pubsub')
      expect(subscribers).toHaveLength(1)
      await admin.client('KILL', 'ID', subscribers[0]!.id)
    }

    async function gapThenResume(bus: RedisBus, publisher: RedisBus, name: string): Promise<BusDelivery[]> {
      const r = recorder()
      const other = recorder()
      bus.subscribe(r.handler)
      bus.subscribe(other.handler)
      await publisher.publish(message(1))
      await r.until((ds) => ds.length === 1)

      await killSubscriber(name)
      await Promise.all([r.until((ds) => ds.length === 2), other.until((ds) => ds.length === 2)])
      expect(r.deliveries[1]).toEqual({ type: 'gap' })
      expect(other.deliveries[1]).toEqual({ type: 'gap' })

      // Right after the gap the subscription is confirmed: the next message is heard.
      await publisher.publish(message(2))
      await r.until((ds) => ds.length === 3)
      return r.deliveries
    }

    it('delivers a gap to every handler once it is back, then delivery resumes', async () => {
      const channel = testPrefix('gap')
      const name = channel.replaceAll(':', '-')
      const errors: unknown[] = []
      const bus = redisBus({ url: namedUrl(name), channel, onError: (e) => errors.push(e) })
      const publisher = redisBus({ url: REDIS_URL, channel })
      try {
        await Promise.all([bus.subscribed(), publisher.subscribed()])
        const deliveries = await gapThenResume(bus, publisher, name)
        expect(deliveries).toEqual([{ type: 'message', message: message(1) }, { type: 'gap' }, { type: 'message', message: message(2) }])
        // A second loss is a second gap.
        await killSubscriber(name)
        const r = recorder()
        bus.subscribe(r.handler)
        await r.until((ds) => ds.some((d) => d.type === 'gap'))
      } finally {
        await Promise.all([bus.close(), publisher.close()])
      }
    })

    it('resubscribes by itself even when the client turns autoResubscribe off', async () => {
      const defaults = new Redis({ lazyConnect: true })
      expect(defaults.options.autoResubscribe).toBe(true) // the ioredis default
      defaults.disconnect()
      const channel = testPrefix('gap')
      const name = channel.replaceAll(':', '-')
      const client = new Redis(REDIS_URL, { connectionName: name, autoResubscribe: false })
      const bus = redisBus({ client, channel })
      const publisher = redisBus({ url: REDIS_URL, channel })
      try {
        await Promise.all([bus.subscribed(), publisher.subscribed()])
        const deliveries = await gapThenResume(bus, publisher, name)
        expect(deliveries.map((d) => d.type)).toEqual(['message', 'gap', 'message'])
      } finally {
        await Promise.all([bus.close(), publisher.close()])
        await client.quit()
      }
    })
  })

  describe('options', () => {
    it('needs exactly one of client, url and sentinels, and names the option', () => {
      expect(() => redisBus({})).toThrow(/exactly one of the options `client`, `url` and `sentinels`, got neither/)
      const client = new Redis({ lazyConnect: true })
      expect(() => redisBus({ client, url: REDIS_URL })).toThrow(/got `client` and `url`/)
      expect(() => redisBus({ url: REDIS_URL, namespace: 7 as never })).toThrow(/`namespace`/)
      expect(() => redisBus({ url: REDIS_URL, sharded: 'yes' as never })).toThrow(/`sharded`/)
      expect(() => redisBus({ url: '' })).toThrow(/`url`/)
      expect(() => redisBus({ client: {} as Redis })).toThrow(/`client`/)
      expect(() => redisBus({ url: REDIS_URL, channel: '' })).toThrow(/`channel`/)
      expect(() => redisBus({ url: REDIS_URL, onError: 'x' as never })).toThrow(/`onError`/)
      expect(() => redisBus({ url: REDIS_URL, onHandlerError: 'x' as never })).toThrow(/`onHandlerError`/)
      client.disconnect()
    })

    it(`listens on ${DEFAULT_CHANNEL} by default`, async () => {
      const bus = redisBus({ url: REDIS_URL })
      const r = recorder()
      bus.subscribe(r.handler)
      try {
        await bus.subscribed()
        const sent = message(1, { origin: testPrefix('default-channel') })
        await admin.publish(DEFAULT_CHANNEL, JSON.stringify(sent))
        await r.until((ds) => ds.some((d) => d.type === 'message' && d.message.origin === sent.origin))
      } finally {
        await bus.close()
      }
    })

    it('reports a throwing handler to onHandlerError', async () => {
      const channel = testPrefix('handler-error')
      const reported: unknown[] = []
      const failure = new Error('handler failure')
      const bus = redisBus({ url: REDIS_URL, channel, onHandlerError: (error) => reported.push(error) })
      const r = recorder()
      bus.subscribe(() => {
        throw failure
      })
      bus.subscribe(r.handler)
      try {
        await bus.subscribed()
        await bus.publish(message(1))
        await r.until((ds) => ds.length === 1)
        expect(reported).toEqual([failure])
      } finally {
        await bus.close()
      }
    })

    it('reports an outage to onError, never throws, and rejects publishes stranded by close', async () => {
      const port = await freePort()
      let reported!: (error: unknown) => void
      const firstError = new Promise<unknown>((resolve) => (reported = resolve))
      const bus = redisBus({ url: `redis://127.0.0.1:${port}`, channel: testPrefix('outage'), onError: (e) => reported(e) })
      const subscribed = bus.subscribed()
      const stranded = bus.publish(message(1))
      expect(await firstError).toMatchObject({ code: 'ECONNREFUSED' })
      await bus.close()
      await expect(stranded).rejects.toMatchObject({ code: 'ECHOSTORE_BUS_CLOSED' })
      await expect(subscribed).rejects.toMatchObject({ code: 'ECHOSTORE_BUS_CLOSED' })
    })

    // Each publish used to race a promise that settles only at close(), leaving a reaction (~313 bytes)
    // behind per publish until the bus closed.
    it('keeps nothing per publish once Redis has answered it', async () => {
      const bus = redisBus({ url: REDIS_URL, channel: testPrefix('retain') })
      await bus.subscribed()
      const publishAll = async (n: number) => {
        for (let i = 0; i < n; i += 1_000) await Promise.all(Array.from({ length: 1_000 }, (_, j) => bus.publish(message(i + j + 1))))
      }
      await publishAll(2_000) // warm up: connections, compiled code
      collectGarbage()
      const before = process.memoryUsage().heapUsed
      await publishAll(20_000)
      collectGarbage()
      const grownPerPublish = (process.memoryUsage().heapUsed - before) / 20_000
      expect(grownPerPublish).toBeLessThan(50)
      await bus.close()
    })

    it('rejects subscribed() when closed before the first subscription', async () => {
      const bus = redisBus({ url: REDIS_URL, channel: testPrefix('early-close') })
      const subscribed = bus.subscribed()
      await bus.close()
      await expect(subscribed).rejects.toMatchObject({ code: 'ECHOSTORE_BUS_CLOSED' })
    })
  })
})

describe('redisBus on a url that never answers', () => {
  it('refuses each publish as unreachable once it waited PUBLISH_TIMEOUT for a connection (nothing waits on it afterwards)', async () => {
    // A port nothing listens on: the bus never connects (no Redis needed).
    const bus = redisBus({ url: 'redis://127.0.0.1:1', onError: () => {} })
    const refusals = await Promise.all(
      [bus.publish(message(1)), bus.publish(message(2))].map((published) =>
        published.then(
          () => 'published',
          (error: unknown) => error,
        ),
      ),
    )
    for (const refusal of refusals) {
      expect(refusal).toBeInstanceOf(RedisUnreachableError)
      expect((refusal as Error).message).toMatch(/had no connection within 1000 ms to publish on/)
    }
    await bus.close()
  })
})
