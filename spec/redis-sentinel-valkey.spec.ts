/**
 * The Redis adapters through Sentinel (the local set of `.ci/redis-topology.sh`: 1 master, 1
 * replica, 3 sentinels) with an ioredis and a node-redis client, through an iovalkey client (an ioredis fork of the same API), and on a
 * Valkey server when `valkey-server` is installed: the L2 and bus contracts on each.
 */
import { once } from 'node:events'
import { Redis } from 'ioredis'
import Valkey from 'iovalkey'
import { createSentinel } from 'redis'
import { afterAll, beforeAll, describe } from 'vitest'
import { redisBus, redisL2, type RedisConnectionOptions } from '../src/redis.js'
import { busContract } from './bus-contract.js'
import { l2ContractSuite } from './l2-contract.js'
import { cleanPrefix, describeRedis, REDIS_URL, redisKeyClock, testPrefix } from './support/redis.js'
import { SENTINELS, SENTINEL_NAME, VALKEY_URL, describeTopology, describeValkey } from './support/topology.js'

/** The L2 and bus contracts through `where`, with `admin` (a plain client of the same master) for the harness's raw access. */
function contracts(label: string, where: () => RedisConnectionOptions, admin: () => Redis): void {
  const prefix = testPrefix(label)
  let raw: Redis | undefined
  const client = () => (raw ??= admin())
  afterAll(async () => {
    if (raw === undefined) return
    await cleanPrefix(raw, prefix)
    raw.disconnect()
  })

  describe('the L2Store contract', () => {
    l2ContractSuite(() => ({
      store: redisL2({ ...where(), prefix, timeout: 1_000 }),
      ...redisKeyClock(client, prefix),
      peer: () => redisL2({ ...where(), prefix, timeout: 1_000 }),
    }))
  })

  describe('the bus contract', () => {
    busContract(async () => {
      const channel = testPrefix(`${label}-bus`)
      const [a, b] = [redisBus({ ...where(), channel }), redisBus({ ...where(), channel })]
      await Promise.all([a.subscribed(), b.subscribed()])
      return { a, b, raw: async (payload) => void (await client().publish(channel, payload)) }
    })
  })
}

describeTopology('through Sentinel', () => {
  contracts(
    'sentinel',
    () => ({ sentinels: SENTINELS, name: SENTINEL_NAME }),
    () => new Redis({ sentinels: SENTINELS, name: SENTINEL_NAME }),
  )
})

describeTopology('through Sentinel, on a node-redis createSentinel() client', () => {
  let client: ReturnType<typeof createSentinel> | undefined
  beforeAll(async () => {
    client = createSentinel({ name: SENTINEL_NAME, sentinelRootNodes: SENTINELS })
    client.on('error', () => {})
    await client.connect()
  })
  afterAll(async () => {
    await client?.close()
  })
  contracts(
    'node-redis-sentinel',
    () => ({ client: client! }),
    () => new Redis({ sentinels: SENTINELS, name: SENTINEL_NAME }),
  )
})

describeRedis('through an iovalkey client', () => {
  // Ready before the suites use it: a given client is refused every call while it is not ready.
  let client: Valkey | undefined
  beforeAll(async () => {
    client = new Valkey(REDIS_URL)
    await once(client, 'ready')
  })
  afterAll(() => client?.disconnect())
  contracts(
    'iovalkey',
    () => ({ client: client! }),
    () => new Redis(REDIS_URL),
  )
})

describeValkey('on a Valkey server', () => {
  contracts(
    'valkey',
    () => ({ url: VALKEY_URL }),
    () => new Redis(VALKEY_URL),
  )
})
