/**
 * Start-up and errors of the Redis adapters, and isolation of environments on one Redis:
 * `subscribed()` gives up with an error naming the host and the cause; an outage is reported once,
 * as a process warning when there is no `onError`; a table's `l2_error` carries the real cause; the
 * default channel follows the namespace, and a message of another namespace is ignored and counted.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { createServer, type AddressInfo, type Socket } from 'node:net'
import { describe, expect, it } from 'vitest'
import { createTable } from '../src/index.js'
import { DEFAULT_CHANNEL, redisBus, redisL2 } from '../src/redis.js'
import { REDIS_URL, describeRedis, suiteRedis, testPrefix } from './support/redis.js'

/** Resolves once `count` more connections to `port` (on 127.0.0.1) were refused: Node's `net.client.socket` channel hands over each socket a client opens. */
function refusedConnections(port: number, count: number): Promise<void> {
  return new Promise((resolve) => {
    let refused = 0
    const opened = (message: unknown) => {
      ;(message as { socket: Socket }).socket.once('error', (error: NodeJS.ErrnoException & { port?: number }) => {
        if (error.code !== 'ECONNREFUSED' || error.port !== port || ++refused < count) return
        unsubscribe('net.client.socket', opened)
        resolve()
      })
    }
    subscribe('net.client.socket', opened)
  })
}

/** A TCP port nobody listens on (bound, read, released). */
async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

/**
 * Collects process warnings of EchoStore until `stop()`, in place of the process's other `warning`
 * listeners (Node's own prints each warning to stderr: the outages this file causes on purpose are
 * no noise in the test run).
 */
function warnings(): { seen: Error[]; stop(): void } {
  const seen: Error[] = []
  const others = process.listeners('warning')
  const listener = (warning: Error) => {
    if ((warning as { code?: string }).code === 'ECHOSTORE_REDIS_UNREACHABLE') seen.push(warning)
  }
  process.removeAllListeners('warning')
  process.on('warning', listener)
  return {
    seen,
    stop: () => {
      process.off('warning', listener)
      for (const other of others) process.on('warning', other)
    },
  }
}

describe('start-up against a Redis that is not there', () => {
  it('subscribed({ timeout }) rejects with an error naming the host and the refusal', async () => {
    const port = await freePort()
    const bus = redisBus({ url: `redis://127.0.0.1:${port}`, onError: () => {} })
    try {
      const error = await bus.subscribed({ timeout: 300 }).catch((e: unknown) => e)
      expect(error).toMatchObject({ code: 'ECHOSTORE_REDIS_UNREACHABLE', host: `127.0.0.1:${port}`, cause: { code: 'ECONNREFUSED' } })
      expect((error as Error).message).toMatch(new RegExp(`127\\.0\\.0\\.1:${port} did not confirm the subscription within 300 ms.*ECONNREFUSED`))
    } finally {
      await bus.close()
    }
  })

  it('subscribed({ signal }) rejects as soon as the signal aborts, naming the host', async () => {
    const port = await freePort()
    const bus = redisBus({ sentinels: [{ host: '127.0.0.1', port }], name: 'nobody', onError: () => {} })
    const controller = new AbortController()
    try {
      const waiting = bus.subscribed({ signal: controller.signal })
      controller.abort(new Error('start-up cancelled'))
      await expect(waiting).rejects.toMatchObject({ code: 'ECHOSTORE_REDIS_UNREACHABLE', host: expect.stringContaining(`sentinel master nobody (127.0.0.1:${port})`) })
      expect(() => bus.subscribed({ timeout: -1 })).toThrow(/`timeout`/)
      expect(() => bus.subscribed({ signal: {} as AbortSignal })).toThrow(/`signal`/)
    } finally {
      await bus.close()
    }
  })

  it('a cluster client whose nodes do not answer: subscribed() rejects naming its seed node, and close() does not hang', async () => {
    const { Cluster } = await import('ioredis')
    const port = await freePort()
    const cluster = new Cluster([{ host: '127.0.0.1', port }], { clusterRetryStrategy: () => 100 })
    cluster.on('error', () => {})
    const bus = redisBus({ client: cluster })
    await expect(bus.subscribed({ timeout: 300 })).rejects.toMatchObject({ code: 'ECHOSTORE_REDIS_UNREACHABLE', host: `127.0.0.1:${port}` })
    await bus.close()
    cluster.disconnect()
  })

  it('reports the outage once, as a process warning, when there is no onError', async () => {
    const port = await freePort()
    const seen = warnings()
    const store = redisL2({ url: `redis://127.0.0.1:${port}` })
    const bus = redisBus({ url: `redis://127.0.0.1:${port}` })
    try {
      for (let i = 0; i < 5; i++) await store.get('t', i).catch(() => {})
      await bus.subscribed({ timeout: 600 }).catch(() => {})
      // Let more reconnects fail (four more refused connections): still one warning per adapter.
      await refusedConnections(port, 4)
      expect(seen.seen.map((w) => w.message.match(/^echostore: (\w+)/)?.[1]).sort()).toEqual(['redisBus', 'redisL2'])
      for (const warning of seen.seen) expect(warning.message).toMatch(new RegExp(`127\\.0\\.0\\.1:${port} is unreachable.*ECONNREFUSED`))
    } finally {
      seen.stop()
      await Promise.all([store.close(), bus.close()])
    }
  })

  it("a table's l2_error carries the real cause, not only a timeout", async () => {
    const port = await freePort()
    const store = redisL2({ url: `redis://127.0.0.1:${port}`, onError: () => {} })
    const table = createTable<string>({ name: 'startup', ttl: 1_000, l2: store })
    const errors: unknown[] = []
    table.events.on('l2_error', (event) => errors.push(event.error))
    try {
      expect(await table.fetch('a', () => 'from the origin')).toBe('from the origin')
      expect(errors.length).toBeGreaterThan(0)
      const error = errors[0] as Error & { cause?: { code?: string } }
      expect(error.cause?.code).toBe('ECONNREFUSED')
      expect(error.message).toMatch(/ECONNREFUSED/)
    } finally {
      await table.close()
      await store.close()
    }
  })
})

describeRedis('environments on one Redis', () => {
  /** Every environment's prefix starts with this one, whose keys the suite deletes when it ends. */
  const root = testPrefix('environments')
  const raw = suiteRedis(root)

  it('derives the default channel from the namespace (the L2 prefix)', async () => {
    const buses = [redisBus({ url: REDIS_URL }), redisBus({ url: REDIS_URL, namespace: 'staging:' }), redisBus({ url: REDIS_URL, namespace: 'prod:', channel: 'shared' })]
    expect(buses.map((b) => [b.namespace, b.channel])).toEqual([
      ['echostore:', DEFAULT_CHANNEL],
      ['staging:', 'staging:coherence'],
      ['prod:', 'shared'],
    ])
    await Promise.all(buses.map((b) => b.close()))
  })

  it("as the README sets them up (a prefix each, redisBus({ url }) with no namespace), staging's clear and invalidate leave prod's rows alone (coh_foreign), and prod's own changes still reach prod", async () => {
    const name = testPrefix('catalog') // the default channel is shared with every run on this Redis: a table name of this run's own
    const environment = (prefix: string) => {
      const l2 = redisL2({ url: REDIS_URL, prefix })
      const bus = redisBus({ url: REDIS_URL })
      return { l2, bus, table: createTable<string>({ name, ttl: 600_000, l2, bus }) }
    }
    const staging = environment(`${root}shop:staging:`)
    const prod = environment(`${root}shop:prod:`)
    const prodPeer = environment(`${root}shop:prod:`)
    await Promise.all([staging, prod, prodPeer].map(({ bus }) => bus.subscribed()))
    try {
      expect(await prod.table.fetch('k', () => 'prod k')).toBe('prod k')
      expect(await staging.table.fetch('k', () => 'staging k')).toBe('staging k')
      expect(await staging.table.invalidate('k')).toMatchObject({ broadcast: true })
      expect(await staging.table.clear()).toMatchObject({ broadcast: true })
      // prod's peer publishes after staging's two messages reached Redis: once prod hears it, it heard them.
      const heard = new Promise<void>((resolve) => prod.table.events.on('coherence', (event) => event.id === 'marker' && resolve()))
      await prodPeer.table.invalidate('marker')
      await heard
      expect(prod.table.stats()).toMatchObject({ coh_foreign: 2, coh_applied: 1, clears: 0 })
      expect(prod.table.peek('k')).toBe('prod k')
      expect(staging.table.peek('k')).toBeUndefined()
      expect(await prodPeer.table.fetch('k', () => 'loaded again')).toBe('prod k') // prod's L2 entry stands too
    } finally {
      for (const { table, l2, bus } of [staging, prod, prodPeer]) {
        await table.close()
        await Promise.all([l2.close(), bus.close()])
      }
    }
  })

  it("a clear on staging leaves prod's rows alone, and a message of another namespace on a shared channel is ignored and counted coh_foreign", async () => {
    const [staging, prod] = [`${root}staging:`, `${root}prod:`]
    const channel = testPrefix('shared-channel')
    const l2 = { staging: redisL2({ url: REDIS_URL, prefix: staging }), prod: redisL2({ url: REDIS_URL, prefix: prod }) }
    const bus = { staging: redisBus({ url: REDIS_URL, namespace: staging, channel }), prod: redisBus({ url: REDIS_URL, namespace: prod, channel }) }
    await Promise.all([bus.staging.subscribed(), bus.prod.subscribed()])
    const onStaging = createTable<string>({ name: 'catalog', ttl: 600_000, l2: l2.staging, bus: bus.staging })
    const onProd = createTable<string>({ name: 'catalog', ttl: 600_000, l2: l2.prod, bus: bus.prod })
    const heard: string[] = []
    bus.prod.subscribe((d) => heard.push(d.type))
    try {
      expect(await onProd.fetch('a', () => 'prod a')).toBe('prod a')
      await onStaging.clear()
      await onStaging.invalidate('a')
      // Both messages went through the shared channel before this marker of prod's own.
      await raw().publish(channel, JSON.stringify({ table: 'marker', kind: 'clear', origin: 'spec', ns: prod }))
      await expect.poll(() => heard.includes('message'), { timeout: 5_000 }).toBe(true)
      expect(heard.filter((t) => t === 'foreign')).toHaveLength(2)
      expect(onProd.stats().coh_foreign).toBe(2)
      expect(onProd.peek('a')).toBe('prod a')
      expect(await onProd.fetch('a', () => 'loaded again')).toBe('prod a')
    } finally {
      await Promise.all([onStaging.close(), onProd.close()])
      await Promise.all([bus.staging.close(), bus.prod.close(), l2.staging.close(), l2.prod.close()])
    }
  })
})

describeRedis('a client given to many adapters', () => {
  it('gets its listeners back when each adapter closes', async () => {
    const { Redis } = await import('ioredis')
    const client = new Redis(REDIS_URL)
    const before = client.listenerCount('error')
    const stores = Array.from({ length: 20 }, () => redisL2({ client, prefix: testPrefix('listeners') }))
    expect(client.listenerCount('error')).toBe(before + 20)
    await Promise.all(stores.map((s) => s.close()))
    expect(client.listenerCount('error')).toBe(before)
    expect(client.listenerCount('ready')).toBe(0)
    await client.quit()
  })
})
