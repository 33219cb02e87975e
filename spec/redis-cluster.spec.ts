/**
 * The Redis adapters on a local Redis Cluster (3 masters + 3 replicas, `.ci/redis-topology.sh`):
 * the L2 and bus contracts through a url (the cluster detected from one node, or seed nodes) and
 * through a `Cluster` client; a table's load spread over the masters with no hot spot; one breaker
 * per master, so a master that does not answer costs L2 only for its own ids.
 */
import { once } from 'node:events'
import { Cluster, Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTable } from '../src/index.js'
import { redisBus, redisL2, type RedisBus } from '../src/redis.js'
import { l2Key } from '../src/l2/keys.js'
import { calculateSlot } from '../src/redis/peers.js'
import { busContract } from './bus-contract.js'
import { l2ContractSuite } from './l2-contract.js'
import { testPrefix, redisKeyClock } from './support/redis.js'
import { CLUSTER_URLS, cleanClusterPrefix, clusterMasters, describeTopology, pausingAMaster, portServing } from './support/topology.js'

const prefix = testPrefix('cluster')

/** A cluster client for the spec's own reads and writes. */
function adminCluster(): Cluster {
  return new Cluster([{ host: '127.0.0.1', port: 7100 }], { scaleReads: 'master' })
}

/** {@link adminCluster}, once ready: a client given to EchoStore is refused every call until it is. */
async function readyCluster(): Promise<Cluster> {
  const client = adminCluster()
  if (client.status !== 'ready') await once(client, 'ready')
  return client
}

/** Each master's count of script runs (EVALSHA + EVAL), from INFO commandstats, by port. */
async function scriptCalls(): Promise<Map<number, number>> {
  const counts = new Map<number, number>()
  for (const { port } of await clusterMasters()) {
    const node = new Redis({ host: '127.0.0.1', port })
    const stats = await node.info('commandstats')
    node.disconnect()
    let calls = 0
    for (const match of stats.matchAll(/cmdstat_(?:evalsha|eval):calls=(\d+)/g)) calls += Number(match[1])
    counts.set(port, calls)
  }
  return counts
}

describeTopology('redisL2 and redisBus on a Redis Cluster', () => {
  let admin: Cluster
  /** The master serving `key`'s slot, from the admin client's slot map. */
  const slotMaster = (key: string): Redis => {
    const owner = admin.slots[calculateSlot(key)]![0]
    return admin.nodes('master').find((n) => `${n.options.host}:${n.options.port}` === owner)!
  }
  beforeAll(() => {
    admin = adminCluster()
  })
  afterAll(async () => {
    await cleanClusterPrefix(admin, prefix)
    admin.disconnect()
  })

  const harness = (make: () => ReturnType<typeof redisL2>) => () => ({
    store: make(),
    ...redisKeyClock(() => admin, prefix),
    peer: make,
  })

  describe('the L2Store contract, url of one node (the cluster detected)', () => {
    l2ContractSuite(harness(() => redisL2({ url: CLUSTER_URLS[0]!, prefix, timeout: 1_000 })))
  })

  describe('the L2Store contract, seed nodes', () => {
    l2ContractSuite(harness(() => redisL2({ url: CLUSTER_URLS, prefix, timeout: 1_000 })))
  })

  describe('the L2Store contract, a Cluster client', () => {
    let client: Cluster
    beforeAll(async () => {
      client = await readyCluster()
    })
    afterAll(() => client.disconnect())
    l2ContractSuite(
      harness(() => {
        return redisL2({ client, prefix, timeout: 1_000 })
      }),
    )
  })

  for (const sharded of [true, false]) {
    describe(`the bus contract, ${sharded ? 'sharded' : 'classic'} pub/sub`, () => {
      busContract(async () => {
        const channel = testPrefix(sharded ? 'sharded' : 'classic')
        const [a, b] = [redisBus({ url: CLUSTER_URLS, channel, sharded }), redisBus({ client: adminCluster(), channel, sharded })]
        await Promise.all([a.subscribed(), b.subscribed()])
        return {
          a,
          b,
          // Classic publishes go to one node (the channel's master, as the buses publish), so their order holds.
          raw: async (payload) => void (await (sharded ? admin.spublish(channel, payload) : slotMaster(channel).publish(channel, payload))),
        }
      })
    })
  }

  it('uses sharded pub/sub by default where the servers have it: SPUBLISH reaches it, a classic PUBLISH does not', async () => {
    const channel = testPrefix('default-sharded')
    const bus: RedisBus = redisBus({ url: CLUSTER_URLS[1]!, channel })
    const heard: string[] = []
    bus.subscribe((d) => d.type === 'message' && heard.push(d.message.origin))
    try {
      await bus.subscribed()
      await admin.publish(channel, JSON.stringify({ table: 't', kind: 'clear', origin: 'classic' }))
      await admin.spublish(channel, JSON.stringify({ table: 't', kind: 'clear', origin: 'sharded' }))
      // The channel's shard delivers in order: once the sharded one is heard, the classic one would have been.
      for (let i = 0; i < 200 && heard.length === 0; i++) await admin.ping()
      await expect.poll(() => heard, { timeout: 5_000 }).toEqual(['sharded'])
    } finally {
      await bus.close()
    }
  })

  it('spreads one table over the masters: 10,000 gets of random ids, no master above 1.5× the mean of script runs', async () => {
    const store = redisL2({ url: CLUSTER_URLS, prefix: `${prefix}spread:`, timeout: 1_000 })
    try {
      await store.clear('spread') // a cleared table: every bucket has a generation key
      await store.get('spread', 'warm') // connected, scripts loaded
      const before = await scriptCalls()
      for (let i = 0; i < 10_000; i += 500) {
        await Promise.all(Array.from({ length: 500 }, () => store.get('spread', `id-${Math.floor(Math.random() * 1e9)}`)))
      }
      const after = await scriptCalls()
      const ran = [...after].map(([port, calls]) => calls - (before.get(port) ?? 0))
      const mean = ran.reduce((a, b) => a + b, 0) / ran.length
      expect(ran.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(10_000)
      expect(Math.max(...ran) / mean).toBeLessThan(1.5)
    } finally {
      await store.close()
    }
  })

  it('reads and leases a batch in one pipeline per master: getMany and leases.acquireMany of ids spread over every master', async () => {
    const client = await readyCluster()
    const store = redisL2({ client, prefix: `${prefix}pipelines:`, timeout: 1_000 })
    const ids = Array.from({ length: 60 }, (_, i) => `item-${i}`)
    try {
      await Promise.all(ids.map((id, i) => store.set('items', id, { kind: 'value', value: i, version: 1, ttl: 60_000 })))
      const masters = new Set(ids.map((id) => client.slots[calculateSlot(l2Key(`${prefix}pipelines:`, 'items', id))]![0]))
      expect(masters.size).toBe(3)
      let pipelines = 0
      const pipeline = client.pipeline.bind(client)
      client.pipeline = ((...args: Parameters<Cluster['pipeline']>) => (pipelines++, pipeline(...args))) as Cluster['pipeline']
      const entries = await store.getMany!('items', [...ids, 'never written'])
      expect(entries.map((entry) => entry?.value)).toEqual([...ids.map((_, i) => i), undefined])
      expect(pipelines).toBe(3)
      expect(await store.leases!.acquireMany!('items', ids, 'batch', 60_000)).toEqual(ids.map(() => true))
      expect(await store.leases!.acquireMany!('items', ids.slice(0, 5), 'other', 60_000)).toEqual(ids.slice(0, 5).map(() => false))
      expect(pipelines).toBe(6 + new Set(ids.slice(0, 5).map((id) => client.slots[calculateSlot(l2Key(`${prefix}pipelines:`, 'items', id))]![0])).size)
      // A clear between two reads: the second reads nothing from before it, in any bucket.
      await store.clear('items')
      expect((await store.getMany!('items', ids)).every((entry) => entry === undefined)).toBe(true)
    } finally {
      await store.close()
      client.disconnect()
    }
  })

  it('a batch read keeps one breaker per master: while one master does not answer, the ids on the others are L2 hits', async () => {
    await pausingAMaster(async () => {
      const own = `${prefix}batch-breaker:`
      const store = redisL2({ url: CLUSTER_URLS, prefix: own, timeout: 200 })
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
        await writer.fetchMany(ids, (asked) => asked.map((id) => `${id} from the origin`))
        const reader = createTable<string>({ name: 'accounts', ttl: 600_000, l2: store })
        await node.call('CLIENT', 'PAUSE', '4000', 'ALL')
        const asked: string[] = []
        const answers = await reader.fetchMany(ids, (missing) => (asked.push(...missing), missing.map((id) => `${id} loaded again`)))
        await node.call('CLIENT', 'UNPAUSE')
        const onPaused = ids.filter((id) => masterOf(id) === paused)
        expect(onPaused.length).toBeGreaterThan(0)
        expect(onPaused.length).toBeLessThan(ids.length)
        expect(asked).toEqual(onPaused)
        for (const [i, id] of ids.entries()) expect(answers[i]).toBe(masterOf(id) === paused ? `${id} loaded again` : `${id} from the origin`)
        expect(reader.stats()).toMatchObject({ l2_hits: ids.length - onPaused.length, batch_loads: 1 })
        await reader.close()
      } finally {
        await node.call('CLIENT', 'UNPAUSE').catch(() => {})
        node.disconnect()
        await writer.close()
        await store.close()
      }
    })
  })

  it('keeps one breaker per master: while one master does not answer, ids on the others keep their L2 hits', async () => {
    await pausingAMaster(async () => {
      const own = `${prefix}breaker:`
      const store = redisL2({ url: CLUSTER_URLS, prefix: own, timeout: 200 })
      const writer = createTable<string>({ name: 'accounts', ttl: 600_000, l2: store })
      const ids = Array.from({ length: 60 }, (_, i) => `account-${i}`)
      const masterOf = new Map<string, number>()
      const masters = await clusterMasters()
      for (const id of ids) {
        const slot = calculateSlot(l2Key(own, 'accounts', id))
        masterOf.set(id, portServing(masters, slot))
      }
      const paused = masters[0]!.port
      const node = new Redis({ host: '127.0.0.1', port: paused })
      try {
        for (const id of ids) await writer.fetch(id, () => `${id} from the origin`)
        // A fresh table (a fresh L1) reads everything from L2 while one master is paused.
        const reader = createTable<string>({ name: 'accounts', ttl: 600_000, l2: store })
        await node.call('CLIENT', 'PAUSE', '4000', 'ALL')
        const answers = await Promise.all(ids.map((id) => reader.fetch(id, () => `${id} loaded again`)))
        await node.call('CLIENT', 'UNPAUSE')
        const onHealthy = ids.filter((id) => masterOf.get(id) !== paused)
        expect(onHealthy.length).toBeGreaterThan(0)
        expect(onHealthy.length).toBeLessThan(ids.length)
        for (const [i, id] of ids.entries()) expect(answers[i]).toBe(masterOf.get(id) === paused ? `${id} loaded again` : `${id} from the origin`)
        expect(reader.stats().l2_hits).toBe(onHealthy.length)
        await reader.close()
      } finally {
        await node.call('CLIENT', 'UNPAUSE').catch(() => {})
        node.disconnect()
        await writer.close()
        await store.close()
      }
    })
  })
})
