/**
 * Failover under load, on the failover specs' own Redis Cluster and Sentinel set (`.ci/redis-topology.sh`): a
 * master is killed (SIGKILL, by its pid) while a table fetches in a loop and another instance
 * publishes invalidations. No fetch fails; the bus either delivers every message or a gap; L2 hits
 * come back once the replica is promoted (the stall is measured and printed); after a Sentinel
 * failover writes go to the new master (no READONLY). The killed server is brought back as a replica.
 * Each runs from a url (ioredis) and on a node-redis client.
 */
import { performance } from 'node:perf_hooks'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createTable, type Table } from '../src/index.js'
import type { BusDelivery } from '../src/bus/bus.js'
import { l2Key } from '../src/l2/keys.js'
import { calculateSlot } from '../src/redis/peers.js'
import { createCluster, createSentinel } from 'redis'
import { Redis } from 'ioredis'
import { NODE_REDIS_FAIL_FAST, redisBus, redisL2, type RedisBusOptions } from '../src/redis.js'
import type { RedisConnectionOptions } from '../src/redis/connection.js'
import { testPrefix } from './support/redis.js'
import {
  FAILOVER_CLUSTER_URLS,
  FAILOVER_SENTINELS,
  FAILOVER_SENTINEL_DATA_PORTS,
  FAILOVER_SENTINEL_NAME,
  crash,
  describeTopology,
  masterOfSlot,
  replicasHoldAll,
  restore,
  sentinelMaster,
  sentinelsAgreeAfter,
  takeFailoverCluster,
} from './support/topology.js'

/** How long the load runs after the kill, at most: failover takes ~1-3 s with a 1 s node timeout. */
const LOAD_MS = 12_000

/** The next turn of the event loop, after the I/O already received: the loops below yield with it, never with a timer. */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

interface Outcome {
  fetches: number
  failed: number
  stallMs: number
  published: number
  heard: number
  gaps: number
}

/**
 * Runs the load around a kill: `reader` fetches ids in a loop; `writer` publishes an invalidate of
 * one id every few ms through its own bus; `kill` crashes the master. The stall is the time from
 * the kill until `probeId`'s L2 entry is read again (an L2 hit after the kill).
 */
async function failover(
  where: RedisConnectionOptions,
  busExtra: Partial<RedisBusOptions>,
  killPort: (channel: string) => Promise<number>,
  masterOf: (key: string) => Promise<number>,
  label: string,
): Promise<Outcome> {
  const prefix = testPrefix(`failover-${label}`)
  const l2Of = () => redisL2({ ...where, prefix, timeout: 200, onError: () => {} })
  const [l2A, l2B] = [l2Of(), l2Of()]
  const busA = redisBus({ ...where, ...busExtra, namespace: prefix, onError: () => {} })
  const busB = redisBus({ ...where, ...busExtra, namespace: prefix, onError: () => {} })
  await Promise.all([busA.subscribed({ timeout: 10_000 }), busB.subscribed({ timeout: 10_000 })])
  const reader: Table<string> = createTable<string>({ name: 'rows', ttl: 600_000, l2: l2A, bus: busA })
  const writer: Table<string> = createTable<string>({ name: 'rows', ttl: 600_000, l2: l2B, bus: busB })
  const deliveries: BusDelivery[] = []
  busA.subscribe((d) => deliveries.push(d))
  const ids = Array.from({ length: 50 }, (_, i) => `row-${i}`)
  const outcome: Outcome = { fetches: 0, failed: 0, stallMs: Number.NaN, published: 0, heard: 0, gaps: 0 }
  try {
    for (const id of ids) await writer.fetch(id, () => `${id} v0`)
    const port = await killPort(busA.channel)
    // An id whose L2 entry lives on the master to be killed: its reads must come back after the promotion.
    let probeId = ids[0]!
    for (const id of ids) if ((await masterOf(l2Key(prefix, 'rows', id))) === port) probeId = id
    await replicasHoldAll(port) // the rows written above survive the crash: the stall ends when they are read
    crash(port)
    const killedAt = performance.now()
    let stop = false
    const fetching = (async () => {
      for (let n = 0; !stop; n++) {
        const id = ids[n % ids.length]!
        outcome.fetches++
        await reader.fetch(id, () => `${id} loaded`).catch(() => outcome.failed++)
        await nextTurn() // lets the I/O of the failover in
      }
    })()
    const publishing = (async () => {
      for (let n = 0; !stop; n++) {
        const ok = await busB.publish({ table: 'probe', id: n, version: 1, kind: 'invalidate', origin: 'failover' }).then(
          () => true,
          () => false,
        )
        if (ok) outcome.published++
        await nextTurn()
      }
    })()
    // The stall: until an L2 read of the probe id (on the killed master) answers again.
    const deadline = killedAt + LOAD_MS
    while (performance.now() < deadline) {
      const entry = await l2B.get('rows', probeId).catch(() => undefined)
      if (entry !== undefined) {
        outcome.stallMs = Math.round(performance.now() - killedAt)
        break
      }
      await nextTurn()
    }
    // A little more load after the promotion (20 more messages published, each a round trip to the new master), then stop.
    const more = outcome.published + 20
    while (outcome.published < more && performance.now() < deadline) await nextTurn()
    stop = true
    await Promise.all([fetching, publishing])
    // Then an end marker, published again each turn until the reader hears one: messages from one
    // publisher reach a subscriber in order, so once the marker is heard every message published
    // before it has arrived or was lost (the assertions say whether a gap was told for it). The
    // test's own timeout bounds a bus that never delivers again.
    const heard = () => deliveries.filter((d) => d.type === 'message' && d.message.table === 'probe').length
    const markerHeard = () => deliveries.some((d) => d.type === 'message' && d.message.table === 'probe-end')
    for (let n = 0; !markerHeard(); n++) {
      await busB.publish({ table: 'probe-end', id: n, version: 1, kind: 'invalidate', origin: 'failover' }).catch(() => {})
      await nextTurn()
    }
    outcome.heard = heard()
    outcome.gaps = deliveries.filter((d) => d.type === 'gap').length
    return outcome
  } finally {
    await Promise.all([reader.close(), writer.close()])
    await Promise.all([busA.close(), busB.close(), l2A.close(), l2B.close()])
  }
}

describeTopology('failover under load', () => {
  let release: (() => void) | undefined
  beforeAll(async () => {
    release = await takeFailoverCluster()
  }, 600_000)
  afterAll(() => {
    try {
      restore()
    } finally {
      release?.()
    }
  }, 90_000)

  it('Cluster: a master killed under load fails no fetch, delivers a gap or loses nothing, and L2 hits come back', async () => {
    const outcome = await failover(
      { url: FAILOVER_CLUSTER_URLS },
      {},
      // The master of the bus channel's slot: the subscription must move.
      (channel) => masterOfSlot(calculateSlot(channel), FAILOVER_CLUSTER_URLS[0]),
      (key) => masterOfSlot(calculateSlot(key), FAILOVER_CLUSTER_URLS[0]),
      'cluster',
    )
    console.log(`[failover] cluster: ${JSON.stringify(outcome)}`)
    expect(outcome.failed).toBe(0)
    expect(outcome.fetches).toBeGreaterThan(100)
    expect(outcome.gaps > 0 || outcome.heard === outcome.published).toBe(true)
    expect(outcome.stallMs).toBeLessThan(LOAD_MS)
  }, 60_000)

  it('Sentinel: the master killed under load fails no fetch, delivers a gap, L2 hits come back, and writes reach the new master', async () => {
    const before = await sentinelMaster(FAILOVER_SENTINELS, FAILOVER_SENTINEL_NAME)
    const outcome = await failover(
      { sentinels: FAILOVER_SENTINELS, name: FAILOVER_SENTINEL_NAME },
      {},
      async () => before,
      async () => before,
      'sentinel',
    )
    console.log(`[failover] sentinel: ${JSON.stringify(outcome)}`)
    expect(outcome.failed).toBe(0)
    expect(outcome.gaps > 0 || outcome.heard === outcome.published).toBe(true)
    expect(outcome.stallMs).toBeLessThan(LOAD_MS)
    // Every sentinel names the replica that was promoted.
    expect(await sentinelsAgreeAfter(before, FAILOVER_SENTINELS, FAILOVER_SENTINEL_NAME)).toBe(FAILOVER_SENTINEL_DATA_PORTS.find((port) => port !== before))
    const store = redisL2({ sentinels: FAILOVER_SENTINELS, name: FAILOVER_SENTINEL_NAME, prefix: testPrefix('after-failover') })
    try {
      expect(await store.set('t', 'a', { kind: 'value', value: 'written', version: 1, ttl: 5_000 })).toBe(true)
      expect((await store.get('t', 'a'))?.value).toBe('written')
    } finally {
      await store.close()
    }
  }, 60_000)

  it('Cluster, on a node-redis createCluster() client: a master killed under load fails no fetch, delivers a gap or loses nothing, and L2 hits come back', async () => {
    restore() // the master the tests before killed, back as a replica: every shard can fail over again
    const client = createCluster({ rootNodes: FAILOVER_CLUSTER_URLS.map((url) => ({ url })), defaults: NODE_REDIS_FAIL_FAST })
    client.on('error', () => {})
    await client.connect()
    try {
      const outcome = await failover(
        { client },
        {},
        (channel) => masterOfSlot(calculateSlot(channel), FAILOVER_CLUSTER_URLS[0]),
        (key) => masterOfSlot(calculateSlot(key), FAILOVER_CLUSTER_URLS[0]),
        'nr-cluster',
      )
      console.log(`[failover] node-redis cluster: ${JSON.stringify(outcome)}`)
      expect(outcome.failed).toBe(0)
      expect(outcome.fetches).toBeGreaterThan(100)
      expect(outcome.gaps > 0 || outcome.heard === outcome.published).toBe(true)
      expect(outcome.stallMs).toBeLessThan(LOAD_MS)
    } finally {
      client.destroy()
    }
  }, 120_000)

  it('Sentinel, on a node-redis createSentinel() client: the master killed under load fails no fetch, loses nothing or delivers a gap, and L2 hits come back', async () => {
    restore()
    const before = await sentinelMaster(FAILOVER_SENTINELS, FAILOVER_SENTINEL_NAME)
    const client = createSentinel({ name: FAILOVER_SENTINEL_NAME, sentinelRootNodes: FAILOVER_SENTINELS, nodeClientOptions: NODE_REDIS_FAIL_FAST })
    client.on('error', () => {})
    await client.connect()
    try {
      const outcome = await failover(
        { client },
        {},
        async () => before,
        async () => before,
        'nr-sentinel',
      )
      console.log(`[failover] node-redis sentinel: ${JSON.stringify(outcome)}`)
      expect(outcome.failed).toBe(0)
      expect(outcome.gaps > 0 || outcome.heard === outcome.published).toBe(true)
      expect(outcome.stallMs).toBeLessThan(LOAD_MS)
      // Every sentinel names the replica that was promoted.
      expect(await sentinelsAgreeAfter(before, FAILOVER_SENTINELS, FAILOVER_SENTINEL_NAME)).toBe(FAILOVER_SENTINEL_DATA_PORTS.find((port) => port !== before))
    } finally {
      client.destroy()
    }
  }, 120_000)
})

describeTopology('a subscriber connection dropped', () => {
  it('Sentinel, on a node-redis createSentinel() client: a change published while the bus was not subscribed is told as a gap (node-redis would resubscribe silently)', async () => {
    restore()
    const master = await sentinelMaster(FAILOVER_SENTINELS, FAILOVER_SENTINEL_NAME)
    const client = createSentinel({ name: FAILOVER_SENTINEL_NAME, sentinelRootNodes: FAILOVER_SENTINELS, nodeClientOptions: NODE_REDIS_FAIL_FAST })
    client.on('error', () => {})
    await client.connect()
    const bus = redisBus({ client, namespace: testPrefix('dropped-subscriber'), onError: () => {} })
    const admin = new Redis(master, '127.0.0.1')
    try {
      await bus.subscribed({ timeout: 10_000 })
      // The gap is awaited as it is delivered; a bus that never tells one fails by the test's own timeout.
      const told = new Promise<'gap'>((resolve) => bus.subscribe((delivery) => delivery.type === 'gap' && resolve('gap')))
      // The subscriber's connection is killed and a change published at once, before it could come back: that change is lost.
      await admin.multi().call('CLIENT', 'KILL', 'TYPE', 'pubsub').publish(bus.channel, 'a change nobody hears').exec()
      expect(await told).toBe('gap')
    } finally {
      admin.disconnect()
      await bus.close()
      client.destroy()
    }
  }, 60_000)
})
