/**
 * node-redis clients on the local Redis Cluster (3 masters + 3 replicas, `.ci/redis-topology.sh`):
 * the L2 contract on a `createCluster()` client (RESP2 and RESP3), the bus contract with one bus on
 * an ioredis `Cluster` and the other on a node-redis cluster (sharded and classic pub/sub), `shard()`
 * naming the master of an id, and one breaker per master.
 */
import { Cluster, Redis } from 'ioredis'
import { createCluster } from 'redis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTable } from '../src/index.js'
import { redisBus, redisL2 } from '../src/redis.js'
import { l2Key } from '../src/l2/keys.js'
import { calculateSlot } from '../src/redis/peers.js'
import { busContract } from './bus-contract.js'
import { l2ContractSuite } from './l2-contract.js'
import { testPrefix, redisKeyClock } from './support/redis.js'
import { CLUSTER_URLS, cleanClusterPrefix, clusterMasters, describeTopology, pausingAMaster, portServing } from './support/topology.js'

const prefix = testPrefix('nr-cluster')

type NodeRedisCluster = ReturnType<typeof createCluster>

/** A connected node-redis cluster client speaking `resp`, with an error listener. */
async function nodeRedisCluster(resp: 2 | 3): Promise<NodeRedisCluster> {
  const client = createCluster({ rootNodes: [{ url: CLUSTER_URLS[0]! }], RESP: resp }) as NodeRedisCluster
  client.on('error', () => {})
  await client.connect()
  return client
}

describeTopology('node-redis clients on a Redis Cluster', () => {
  let admin: Cluster
  beforeAll(() => {
    admin = new Cluster([{ host: '127.0.0.1', port: 7100 }], { scaleReads: 'master' })
  })
  afterAll(async () => {
    await cleanClusterPrefix(admin, prefix)
    admin.disconnect()
  })

  for (const resp of [2, 3] as const) {
    describe(`the L2Store contract, a createCluster() client, RESP${resp}`, () => {
      let client: NodeRedisCluster
      beforeAll(async () => {
        client = await nodeRedisCluster(resp)
      })
      afterAll(async () => {
        await client.close()
      })
      l2ContractSuite(() => ({
        store: redisL2({ client, prefix, timeout: 1_000 }),
        ...redisKeyClock(() => admin, prefix),
        peer: () => redisL2({ client, prefix, timeout: 1_000 }),
      }))
    })
  }

  for (const sharded of [true, false]) {
    describe(`the bus contract, one bus on ioredis and one on node-redis, ${sharded ? 'sharded' : 'classic'} pub/sub`, () => {
      busContract(async () => {
        const channel = testPrefix(sharded ? 'nr-sharded' : 'nr-classic')
        const ioClient = new Cluster([{ host: '127.0.0.1', port: 7100 }], { scaleReads: 'master' })
        const nrClient = await nodeRedisCluster(3)
        const [a, b] = [redisBus({ client: ioClient, channel, sharded }), redisBus({ client: nrClient, channel, sharded })]
        await Promise.all([a.subscribed(), b.subscribed()])
        const owner = admin.slots[calculateSlot(channel)]![0]
        const slotMaster = admin.nodes('master').find((n) => `${n.options.host}:${n.options.port}` === owner)!
        return {
          a,
          b,
          raw: async (payload) => void (await (sharded ? admin.spublish(channel, payload) : slotMaster.publish(channel, payload))),
          dispose: async () => {
            ioClient.disconnect()
            await nrClient.close()
          },
        }
      })
    })
  }

  it('names the master serving an id, as the cluster maps its slot', async () => {
    const client = await nodeRedisCluster(3)
    const store = redisL2({ client, prefix, timeout: 1_000 })
    try {
      const masters = await clusterMasters()
      for (const id of ['a', 'b', 'c', 'd', 'e', 'f']) {
        const slot = calculateSlot(l2Key(prefix, 'shards', id))
        const port = portServing(masters, slot)
        expect(store.shard!('shards', id)).toBe(`127.0.0.1:${port}`)
      }
    } finally {
      await store.close()
      await client.close()
    }
  })

  it('keeps one breaker per master: while one master does not answer, ids on the others keep their L2 hits', async () => {
    await pausingAMaster(async () => {
      const own = `${prefix}breaker:`
      const client = await nodeRedisCluster(3)
      const store = redisL2({ client, prefix: own, timeout: 200 })
      const writer = createTable<string>({ name: 'accounts', ttl: 600_000, l2: store })
      const ids = Array.from({ length: 60 }, (_, i) => `account-${i}`)
      const masters = await clusterMasters()
      const masterOf = (id: string) => {
        const slot = calculateSlot(l2Key(own, 'accounts', id))
        return portServing(masters, slot)
      }
      const paused = masters[0]!.port
      const node = new Redis({ host: '127.0.0.1', port: paused })
      try {
        for (const id of ids) await writer.fetch(id, () => `${id} from the origin`)
        const reader = createTable<string>({ name: 'accounts', ttl: 600_000, l2: store })
        await node.call('CLIENT', 'PAUSE', '4000', 'ALL')
        const answers = await Promise.all(ids.map((id) => reader.fetch(id, () => `${id} loaded again`)))
        await node.call('CLIENT', 'UNPAUSE')
        const onHealthy = ids.filter((id) => masterOf(id) !== paused)
        expect(onHealthy.length).toBeGreaterThan(0)
        expect(onHealthy.length).toBeLessThan(ids.length)
        for (const [i, id] of ids.entries()) expect(answers[i]).toBe(masterOf(id) === paused ? `${id} loaded again` : `${id} from the origin`)
        expect(reader.stats().l2_hits).toBe(onHealthy.length)
        await reader.close()
      } finally {
        await node.call('CLIENT', 'UNPAUSE').catch(() => {})
        node.disconnect()
        await writer.close()
        await store.close()
        await client.close()
      }
    })
  })
})
