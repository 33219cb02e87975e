/**
 * Tables on a real Redis: two tables with separate connections share one L2, a clear reaches the
 * other table over the bus, prefixes isolate tenants (each on connections EchoStore opens from a
 * url, and again on node-redis clients), and a real outage (a TCP proxy in front of Redis, cut and
 * restored by the test; an ioredis client either way its offline queue goes, and a node-redis
 * client) never fails a fetch and ends by itself once Redis answers again.
 */
import { once } from 'node:events'
import { type AddressInfo, type Server, type Socket, createServer, connect as tcpConnect } from 'node:net'
import { performance } from 'node:perf_hooks'
import { Redis, type RedisOptions } from 'ioredis'
import { createClient } from 'redis'
import { afterEach, describe, expect, it } from 'vitest'
import { BREAKER_COOLDOWN, BREAKER_FAILURES, DEFAULT_L2_TIMEOUT } from '../src/limits.js'
import { type Id, type Clock, type Table, type TableEvents, createTable, systemClock } from '../src/index.js'
import { NODE_REDIS_FAIL_FAST, type NodeRedisClient, redisBus, redisL2 } from '../src/redis.js'
import { latchedLoader, settle } from './support/latch.js'
import { describeRedis, REDIS_URL, suiteRedis, testPrefix } from './support/redis.js'

const prefix = testPrefix('table-redis')

/**
 * The sharing and tenancy tests are about what L2 holds, not about its failure policy: a generous
 * per-call bound keeps a loaded machine from turning a slow write into a miss there. The outage
 * tests keep the default bound (DEFAULT_L2_TIMEOUT).
 */
const SLACK = { timeout: 1_000 }

/** The Redis host and port behind `REDIS_URL`, for the proxy to forward to. */
const upstream = new URL(REDIS_URL)
const UPSTREAM_HOST = upstream.hostname || '127.0.0.1'
const UPSTREAM_PORT = Number(upstream.port || 6379)

/**
 * A TCP proxy on 127.0.0.1:<ephemeral port> in front of Redis. `cut()` destroys every connection and
 * from then on accepts and destroys new ones at once (a Redis that is gone); `restore()` forwards again.
 */
async function tcpProxy(): Promise<{ port: number; cut(): void; restore(): void; close(): Promise<void> }> {
  let down = false
  const sockets = new Set<Socket>()
  const track = (socket: Socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => {}) // resets during a cut are the point
  }
  const server: Server = createServer((client) => {
    track(client)
    if (down) {
      client.destroy()
      return
    }
    const server = tcpConnect(UPSTREAM_PORT, UPSTREAM_HOST)
    track(server)
    client.pipe(server)
    server.pipe(client)
    client.on('close', () => server.destroy())
    server.on('close', () => client.destroy())
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return {
    port: (server.address() as AddressInfo).port,
    cut() {
      down = true
      for (const socket of sockets) socket.destroy()
    },
    restore() {
      down = false
    },
    async close() {
      down = true
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

/** The real clock, whose `now()` the test can shift forward (its timers stay real). */
function shiftableClock(): Clock & { shift(ms: number): void } {
  let offset = 0
  return {
    now: () => Date.now() + offset,
    setTimeout: (fn, ms) => systemClock.setTimeout(fn, ms),
    clearTimeout: (handle) => systemClock.clearTimeout(handle),
    shift(ms) {
      offset += ms
    },
  }
}

type Product = { id: string; name: string; tags: string[]; price: { amount: number; currency: string } }

/**
 * Where a test's stores and buses connect: `connect()` gives the options naming the connection, a
 * new one per call; `closeAll()` closes what the test opened, after the stores and buses that use it.
 */
interface Connections {
  connect(): Promise<{ url: string } | { client: NodeRedisClient }>
  closeAll(): Promise<void>
}

/** The clients the table-level cases run on: connections EchoStore opens from a url (ioredis), and node-redis clients the test makes. */
const CLIENTS: { name: string; tag: string; connections(): Connections }[] = [
  { name: 'connections EchoStore opens from a url', tag: 'url', connections: () => ({ connect: async () => ({ url: REDIS_URL }), closeAll: async () => {} }) },
  {
    name: 'node-redis clients (createClient + connect)',
    tag: 'node-redis',
    connections() {
      const opened: { close(): Promise<void> }[] = []
      return {
        async connect() {
          const client = createClient({ url: REDIS_URL, ...NODE_REDIS_FAIL_FAST })
          client.on('error', () => {})
          opened.push(client)
          await client.connect()
          return { client }
        },
        closeAll: async () => void (await Promise.all(opened.splice(0).map((client) => client.close()))),
      }
    },
  },
]

describeRedis('tables on a real Redis', () => {
  suiteRedis(prefix) // deletes the suite’s keys afterwards

  describe.each(CLIENTS)('on $name', ({ tag, connections }) => {
    const on = connections()
    afterEach(() => on.closeAll())

    it('two tables with separate connections: a herd of 200 on A costs one load; the same herd on B costs none', async () => {
      const own = `${prefix}${tag}:herd:`
      const storeA = redisL2({ ...(await on.connect()), prefix: own, ...SLACK })
      const storeB = redisL2({ ...(await on.connect()), prefix: own, ...SLACK })
      const a = createTable<Product | undefined, Id>({ name: 'products', ttl: 60_000, l2: storeA })
      const b = createTable<Product | undefined, Id>({ name: 'products', ttl: 60_000, l2: storeB })
      try {
        const origin = latchedLoader<Product>()
        const herdA = Array.from({ length: 200 }, () => a.fetch('hot', origin.loader))
        // The flight's L2 get is real I/O: wait until it has fallen through to the loader.
        while (origin.calls.length === 0) await settle()
        const loaded: Product = { id: 'hot', name: 'Hot sauce', tags: ['spicy', 'red'], price: { amount: 499, currency: 'EUR' } }
        origin.only().resolve(loaded)
        const readersA = await Promise.all(herdA)
        expect(readersA.every((value) => value === loaded)).toBe(true)
        expect(a.stats()).toMatchObject({ loads: 1, l2_hits: 0, coalesced: 199, flights: 1, fills: 1, l2_errors: 0, l2_timeouts: 0 })

        const readersB = await Promise.all(Array.from({ length: 200 }, () => b.fetch('hot', origin.loader)))
        expect(origin.calls).toHaveLength(1)
        expect(b.stats()).toMatchObject({ loads: 0, l2_hits: 1, coalesced: 199, misses: 200, flights: 1, fills: 1, inflight: 0 })
        // B decoded its own copy: equal to what A loaded, not A's object; every B reader got that one copy.
        const copy = readersB[0]
        expect(copy).toEqual(loaded)
        expect(copy).not.toBe(loaded)
        expect(readersB.every((value) => value === copy)).toBe(true)
      } finally {
        await Promise.all([a.close(), b.close()])
        await Promise.all([storeA.close(), storeB.close()])
      }
    })

    it('clear on A with a Redis bus: B drops its rows, and neither reads an entry from before the clear', async () => {
      const own = `${prefix}${tag}:clear:`
      const channel = `${own}bus`
      const [storeA, storeB] = [redisL2({ ...(await on.connect()), prefix: own, ...SLACK }), redisL2({ ...(await on.connect()), prefix: own, ...SLACK })]
      const [busA, busB] = [redisBus({ ...(await on.connect()), channel }), redisBus({ ...(await on.connect()), channel })]
      await Promise.all([busA!.subscribed(), busB!.subscribed()])
      const a = createTable<string | undefined, Id>({ name: 'products', ttl: 60_000, l2: storeA, bus: busA })
      const b = createTable<string | undefined, Id>({ name: 'products', ttl: 60_000, l2: storeB, bus: busB })
      try {
        expect(await a.fetch('k', () => 'old')).toBe('old')
        expect(await b.fetch('k', () => 'never')).toBe('old') // from L2
        const cleared = new Promise<TableEvents['clear']>((resolve) => b.events.on('clear', resolve))
        expect(await a.clear()).toEqual({ l2: 'cleared', broadcast: true })
        expect(await cleared).toEqual({ table: 'products', dropped: 1, remote: true })
        expect(await b.fetch('k', () => 'new from B')).toBe('new from B')
        expect(await a.fetch('k', () => 'never')).toBe('new from B') // A reads B's fill, written after the clear
        expect([a.stats().clears, b.stats().clears, b.stats().loads]).toEqual([1, 1, 1])
      } finally {
        await Promise.all([a.close(), b.close()])
        await Promise.all([storeA!.close(), storeB!.close(), busA!.close(), busB!.close()])
      }
    })

    it('tenants: a fill under one prefix is a miss under another; 1 and "1" stay distinct through Redis', async () => {
      const tenantA = `${prefix}${tag}:tenant-a:`
      const tenantB = `${prefix}${tag}:tenant-b:`
      const stores = [
        redisL2({ ...(await on.connect()), prefix: tenantA, ...SLACK }),
        redisL2({ ...(await on.connect()), prefix: tenantB, ...SLACK }),
        redisL2({ ...(await on.connect()), prefix: tenantA, ...SLACK }),
      ]
      const [onA, onB, onA2] = stores.map((l2) => createTable<string | undefined, Id>({ name: 'accounts', ttl: 60_000, l2 })) as [
        Table<string | undefined, Id>,
        Table<string | undefined, Id>,
        Table<string | undefined, Id>,
      ]
      try {
        expect(await onA.fetch('acme', () => 'acme of tenant A')).toBe('acme of tenant A')
        expect(await onA.fetch(1, () => 'the number 1')).toBe('the number 1')

        // Tenant B, same table name and ids: nothing of tenant A's is visible.
        expect(await onB.fetch('acme', () => 'acme of tenant B')).toBe('acme of tenant B')
        expect(await onB.fetch(1, () => 'B: the number 1')).toBe('B: the number 1')
        expect(onB.stats()).toMatchObject({ l2_hits: 0, loads: 2 })

        // A second table of tenant A (cold L1): the string '1' is not the number 1 in Redis either.
        expect(await onA2.fetch('1', () => 'the string "1"')).toBe('the string "1"')
        expect(await onA2.fetch(1, () => 'never')).toBe('the number 1')
        expect(await onA2.fetch('acme', () => 'never')).toBe('acme of tenant A')
        expect(onA2.stats()).toMatchObject({ l2_hits: 2, loads: 1 })

        // And tenant A's entries were not overwritten by tenant B's fills.
        const fresh = redisL2({ ...(await on.connect()), prefix: tenantA })
        expect((await fresh.get('accounts', 'acme'))?.value).toBe('acme of tenant A')
        expect((await fresh.get('accounts', '1'))?.value).toBe('the string "1"')
        expect((await fresh.get('accounts', 1))?.value).toBe('the number 1')
        await fresh.close()
      } finally {
        await Promise.all([onA.close(), onB.close(), onA2.close()])
        await Promise.all(stores.map((store) => store.close()))
      }
    })
  })

  describe('a real outage: Redis behind a TCP proxy that the test cuts and restores', () => {
    /** A connected client through the proxy on `port`, the errors it reported, and promises of its connection going and coming back. */
    interface Proxied {
      client: Redis | NodeRedisClient
      errors: string[]
      /** Resolves once the client has seen its connection go (call it before the cut). */
      lost(): Promise<unknown>
      /** Resolves once the client is connected again (call it before the restore). */
      back(): Promise<unknown>
      drop(): void
    }

    /** An ioredis client with `options`, reconnecting quickly, forever (the proxy refuses while cut). */
    async function ioredisThrough(port: number, options: RedisOptions): Promise<Proxied> {
      const client = new Redis({ host: '127.0.0.1', port, retryStrategy: () => 5, connectTimeout: 1_000, ...options })
      const errors: string[] = []
      client.on('error', (error: Error) => errors.push(error.message))
      await once(client, 'ready')
      return {
        client,
        errors,
        lost: () => new Promise((resolve) => client.once('close', resolve)), // not events.once: it rejects on the reset's 'error'
        back: () => new Promise((resolve) => client.once('ready', resolve)),
        drop: () => client.disconnect(),
      }
    }

    /** A node-redis client, reconnecting quickly, forever; EchoStore never leaves an L2 call in its offline queue. */
    async function nodeRedisThrough(port: number): Promise<Proxied> {
      const client = createClient({ socket: { host: '127.0.0.1', port, connectTimeout: 1_000, reconnectStrategy: () => 5 } })
      const errors: string[] = []
      client.on('error', (error: Error) => errors.push(error.message))
      await client.connect()
      return {
        client,
        errors,
        lost: () => new Promise((resolve) => client.once('reconnecting', resolve)),
        back: () => new Promise((resolve) => client.once('ready', resolve)),
        drop: () => client.destroy(),
      }
    }

    /**
     * One outage, end to end. Whatever the client's settings (ioredis with its offline queue on or
     * off, node-redis), a call while its connection is not ready is refused at once (l2_errors),
     * never queued to land after the table gave up on it.
     */
    async function outage(label: string, through: (port: number) => Promise<Proxied>) {
      const own = `${prefix}outage-${label}:`
      const proxy = await tcpProxy()
      const proxied = await through(proxy.port)
      const { client, errors: clientErrors } = proxied
      const clock = shiftableClock()
      const table = createTable<string | undefined, Id>({ name: 'outage', ttl: 60_000, clock, sweepInterval: 60_000, l2: redisL2({ client, prefix: own }) })
      // Another table, through the real port: it writes what the first one should read once Redis is back.
      const elsewhereL2 = redisL2({ url: REDIS_URL, prefix: own, ...SLACK })
      const elsewhere = createTable<string | undefined, Id>({ name: 'outage', ttl: 60_000, l2: elsewhereL2 })
      try {
        // Healthy, through the proxy.
        expect(await table.fetch('before', () => 'loaded before')).toBe('loaded before')
        expect(table.stats()).toMatchObject({ loads: 1, l2_errors: 0, l2_timeouts: 0 })

        // Cut: wait until the client has seen its connection go, so every later command meets the outage.
        const closed = proxied.lost()
        proxy.cut()
        await closed

        const figures: { id: string; ms: number }[] = []
        const fetchesDuringOutage = BREAKER_FAILURES + 3
        for (let i = 0; i < fetchesDuringOutage; i++) {
          const id = `down-${i}`
          const started = performance.now()
          expect(await table.fetch(id, () => `loaded ${id}`)).toBe(`loaded ${id}`)
          figures.push({ id, ms: performance.now() - started })
        }
        const duringOutage = table.stats()
        expect(duringOutage.loads).toBe(1 + fetchesDuringOutage)
        // Then the breaker opened. A write-back runs after its fetch has answered, so one more call may have been under way.
        const failures = duringOutage.l2_errors + duringOutage.l2_timeouts
        expect(failures).toBeGreaterThanOrEqual(BREAKER_FAILURES)
        expect(failures).toBeLessThanOrEqual(BREAKER_FAILURES + 1)
        expect(duringOutage.l2_skipped).toBeGreaterThanOrEqual(1)
        expect(duringOutage.inflight).toBe(0)

        // Written through the real port while the table cannot see Redis.
        await elsewhere.put('shared', 'written elsewhere')

        // Restore; wait for the client to reconnect, then let the breaker's cool-down pass on the table's clock.
        const ready = proxied.back()
        proxy.restore()
        const restoredAt = performance.now()
        await ready
        const reconnectMs = performance.now() - restoredAt
        clock.shift(BREAKER_COOLDOWN)

        let loads = 0
        const started = performance.now()
        expect(await table.fetch('shared', () => (loads++, 'from origin'))).toBe('written elsewhere')
        const resumedMs = performance.now() - started
        expect(loads).toBe(0)
        const after = table.stats()
        expect(after.l2_hits).toBe(1)
        expect(after.l2_errors + after.l2_timeouts).toBeLessThanOrEqual(BREAKER_FAILURES + 1) // no new failure once Redis is back
        expect(after.l2_skipped).toBe(duringOutage.l2_skipped)

        // And writes go through again, over the same client: a fill through it is an L2 hit for the
        // other table (a store with room for a loaded machine, so the fill's read cannot time out
        // and leave its write-back unawaited).
        const writer = createTable<string | undefined, Id>({ name: 'outage', ttl: 60_000, l2: redisL2({ client, prefix: own, ...SLACK }) })
        await writer.fetch('after', () => 'loaded after the outage')
        await writer.close()
        let elsewhereLoads = 0
        expect(await elsewhere.fetch('after', () => (elsewhereLoads++, 'never'))).toBe('loaded after the outage')
        expect(elsewhereLoads).toBe(0)

        const rounded = figures.map(({ id, ms }) => `${id} ${ms.toFixed(1)} ms`).join(', ')
        console.log(
          `[outage/${label}] L2 timeout ${DEFAULT_L2_TIMEOUT} ms, breaker after ${BREAKER_FAILURES} failures, immediate loader\n` +
            `  fetch durations while cut: ${rounded}\n` +
            `  counters while cut: l2_errors ${duringOutage.l2_errors}, l2_timeouts ${duringOutage.l2_timeouts}, l2_skipped ${duringOutage.l2_skipped}, loads ${duringOutage.loads}\n` +
            `  reconnect after restore: ${reconnectMs.toFixed(1)} ms; first fetch after the cool-down (an l2_hit): ${resumedMs.toFixed(2)} ms\n` +
            `  client errors seen: ${clientErrors.length} (${[...new Set(clientErrors)].slice(0, 3).join(' | ')})`,
        )
        return { duringOutage, figures }
      } finally {
        await Promise.all([table.close(), elsewhere.close()])
        await elsewhereL2.close()
        proxied.drop()
        await proxy.close()
      }
    }

    // ioredis would hold them in its offline queue and send them once reconnected, long after the
    // table gave up on them (a `put` answered l2: 'failed' landing later): EchoStore refuses them.
    it('with the offline queue on, retrying for ever: calls are still refused at once, the breaker opens, fetches answer from the loader, L2 resumes', async () => {
      const { duringOutage } = await outage('queued', (port) => ioredisThrough(port, { enableOfflineQueue: true, maxRetriesPerRequest: null }))
      expect(duringOutage.l2_errors).toBe(BREAKER_FAILURES)
      expect(duringOutage.l2_timeouts).toBe(0)
    })

    it('with the offline queue off (refused at once): calls fail, the breaker opens, fetches answer from the loader, L2 resumes', async () => {
      const { duringOutage } = await outage('refused', (port) => ioredisThrough(port, { enableOfflineQueue: false }))
      expect(duringOutage.l2_errors).toBe(BREAKER_FAILURES)
      expect(duringOutage.l2_timeouts).toBe(0)
    })

    it('on a node-redis client (refused at once): calls fail, the breaker opens, fetches answer from the loader, L2 resumes', async () => {
      const { duringOutage } = await outage('node-redis', nodeRedisThrough)
      expect(duringOutage.l2_errors).toBe(BREAKER_FAILURES)
      expect(duringOutage.l2_timeouts).toBe(0)
    })
  })
})
