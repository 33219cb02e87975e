/**
 * The peer range of `echostore/redis` is ioredis 5 and 6. The other Redis specs run on the ioredis
 * this repository installs (6, which speaks RESP3 by default); here the adapters load ioredis 5
 * instead (installed as `ioredis5`), as they do in an application that installed ioredis 5, and the
 * L2Store contract and the bus contract run over the RESP2 connections it opens.
 */
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { redisBus } from '../src/redis/bus.js'
import { ioredis } from '../src/redis/peers.js'
import { redisL2 } from '../src/redis/l2.js'
import { busContract } from './bus-contract.js'
import { l2ContractSuite } from './l2-contract.js'
import { describeRedis, REDIS_URL, suiteRedis, testPrefix, redisKeyClock } from './support/redis.js'

// The module every Redis adapter takes ioredis from answers ioredis 5.
vi.mock('../src/redis/peers.js', async (importOriginal) => {
  const { createRequire } = await import('node:module')
  return { ...(await importOriginal<typeof import('../src/redis/peers.js')>()), ioredis: createRequire(import.meta.url)('ioredis5') }
})

const prefix = testPrefix('l2-ioredis5')

/** A url whose connections carry `name` (CLIENT LIST shows it). */
function namedUrl(name: string): string {
  const url = new URL(REDIS_URL)
  url.searchParams.set('connectionName', name)
  return url.toString()
}

/** The RESP version of every connection named `name`, from CLIENT LIST. */
async function protocolsOf(admin: Redis, name: string): Promise<string[]> {
  return String(await admin.call('CLIENT', 'LIST'))
    .split('\n')
    .map((line) => Object.fromEntries(line.split(' ').map((field) => field.split('=', 2) as [string, string])))
    .filter((fields) => fields.name === name)
    .map((fields) => fields.resp ?? '?')
}

describeRedis('echostore/redis on ioredis 5', () => {
  const raw = suiteRedis(prefix)

  it('the adapters load ioredis 5, whose connections speak RESP2 (ioredis 6 opens RESP3 ones)', async () => {
    const { createRequire } = await import('node:module')
    const require = createRequire(import.meta.url)
    expect((require('ioredis5/package.json') as { version: string }).version).toMatch(/^5\./)
    expect((require('ioredis/package.json') as { version: string }).version).toMatch(/^6\./)
    expect(ioredis?.Redis).toBe((require('ioredis5') as NonNullable<typeof ioredis>).Redis)

    const name = `${prefix.replaceAll(':', '-')}resp`
    const store = redisL2({ url: namedUrl(name), prefix })
    const bus = redisBus({ url: namedUrl(name), channel: `${prefix}resp` })
    await bus.subscribed()
    await store.set('resp', 'a', { kind: 'value', value: 1, version: 1, ttl: 60_000 })
    const six = new Redis(namedUrl(`${name}-6`))
    await six.ping()
    try {
      const protocols = await protocolsOf(raw(), name)
      expect(protocols.length).toBeGreaterThanOrEqual(2)
      expect(new Set(protocols)).toEqual(new Set(['2']))
      expect(await protocolsOf(raw(), `${name}-6`)).toEqual(['3'])
    } finally {
      six.disconnect()
      await store.close()
      await bus.close()
    }
  })

  describe('the L2Store contract', () => {
    l2ContractSuite(() => ({
      store: redisL2({ url: REDIS_URL, prefix }),
      ...redisKeyClock(raw, prefix),
      peer: () => redisL2({ url: REDIS_URL, prefix }),
    }))
  })

  describe('the bus contract', () => {
    let admin: Redis
    beforeAll(() => {
      admin = new Redis(REDIS_URL)
    })
    afterAll(async () => {
      await admin.quit()
    })
    busContract(async () => {
      const channel = testPrefix('bus-ioredis5')
      const name = `${channel.replaceAll(':', '-')}url`
      const [a, b] = [redisBus({ url: namedUrl(name), channel }), redisBus({ url: namedUrl(name), channel })]
      await Promise.all([a.subscribed(), b.subscribed()])
      return {
        a,
        b,
        raw: async (payload) => void (await admin.publish(channel, payload)),
        connections: async () => {
          let open = (await protocolsOf(admin, name)).length
          for (let i = 0; i < 100 && open !== 0; i++) open = (await protocolsOf(admin, name)).length
          return open
        },
      }
    })
  })
})
