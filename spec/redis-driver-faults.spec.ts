/**
 * Faults of the Redis drivers (ioredis and node-redis), on redis-servers of this spec's own (ports
 * 6420-6460, each stopped by its pid) and, for what L2 holds, on the shared Redis under a fresh prefix:
 *
 * - a call made while a given ioredis client is not ready is refused at once, as on node-redis:
 *   ioredis's offline queue would send a `put` answered `l2: 'failed'` once Redis is back;
 * - a client shared by `redisL2` and `redisBus` reports its outage to both `onError`s: one
 *   adapter's listener is not the client's own;
 * - an L2 entry the reader takes for corrupt (no expiry, a header it cannot read) is no version to a
 *   write's guard: the next write repairs it, whatever its version; the scripts and `readHeader`
 *   say the same of every header;
 * - `close()` of a store or bus settles while the server is frozen (SIGSTOP).
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { createServer } from 'node:net'
import { Redis } from 'ioredis'
import { createClient } from 'redis'
import { afterEach, describe, expect, it } from 'vitest'
import { createTable } from '../src/index.js'
import { l2Key } from '../src/l2/keys.js'
import { FAIL_FAST, NODE_REDIS_FAIL_FAST, redisBus, redisL2, type RedisBus, type RedisL2 } from '../src/redis.js'
import { readHeader } from '../src/redis/entry.js'
import { nodeRedisDriver } from '../src/redis/node-redis-driver.js'
import type { NodeRedisClient } from '../src/redis/connection.js'
import { within } from './support/ipc-child.js'
import { outcome } from './support/latch.js'
import { describeRedis, keysUnder, REDIS_URL, suiteRedis, testPrefix } from './support/redis.js'

/** The ports this spec's own servers may use. */
const FIRST_PORT = 6420
const LAST_PORT = 6460

/** A redis-server this spec started: stopped, frozen and killed by its pid only. */
class OwnRedis {
  #child: ChildProcess
  private constructor(
    readonly port: number,
    child: ChildProcess,
  ) {
    this.#child = child
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`
  }

  /** Starts one on a free port of this spec's range (or on `port`), once it says it accepts connections. */
  static async start(port?: number): Promise<OwnRedis> {
    const at = port ?? (await freePort())
    const server = new OwnRedis(at, await launch(at))
    running.add(server)
    return server
  }

  /** Stops it (SIGTERM): its clients see their connections close, then refused. */
  async stop(): Promise<void> {
    const child = this.#child
    if (child.exitCode !== null || child.signalCode !== null) return
    child.kill('SIGCONT')
    child.kill('SIGTERM')
    await once(child, 'exit')
  }

  /** Starts it again on the same port (empty: it saves nothing). */
  async restart(): Promise<void> {
    await this.stop()
    this.#child = await launch(this.port)
  }

  /** Freezes it (SIGSTOP): connections stay open, nothing is answered. */
  freeze(): void {
    this.#child.kill('SIGSTOP')
  }

  /** Kills it (SIGKILL ends a frozen process too). */
  async kill(): Promise<void> {
    const child = this.#child
    if (child.exitCode !== null || child.signalCode !== null) return
    child.kill('SIGKILL')
    await once(child, 'exit')
  }
}

/** The keys under `prefix` on `server`, read on a connection of their own. */
async function keysOn(server: OwnRedis, prefix: string): Promise<string[]> {
  const admin = new Redis(server.url)
  try {
    return await keysUnder(admin, prefix)
  } finally {
    await admin.quit()
  }
}

/** Every server a test started, killed after it. */
const running = new Set<OwnRedis>()
afterEach(async () => {
  await Promise.all([...running].map((server) => server.kill()))
  running.clear()
})

/** The first port of this spec's range nothing listens on now. */
async function freePort(): Promise<number> {
  for (let port = FIRST_PORT; port <= LAST_PORT; port++) {
    const probe = createServer()
    const free = await new Promise<boolean>((resolve) => {
      probe.once('error', () => resolve(false))
      probe.listen(port, '127.0.0.1', () => resolve(true))
    })
    if (free) {
      await new Promise<void>((resolve) => probe.close(() => resolve()))
      return port
    }
  }
  throw new Error(`no free port in ${FIRST_PORT}-${LAST_PORT}`)
}

/** A redis-server on `port`, resolved once it prints that it accepts connections (no polling). */
async function launch(port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'ignore'] })
  const ready = new Promise<void>((resolve, reject) => {
    let seen = ''
    child.stdout!.setEncoding('utf8')
    child.stdout!.on('data', (chunk: string) => {
      seen = (seen + chunk).slice(-4_096)
      if (seen.includes('Ready to accept connections')) resolve()
    })
    child.once('exit', (code) => reject(new Error(`redis-server on port ${port} exited (${code}) before it was ready`)))
  })
  await within(ready, 10_000, `redis-server on port ${port}`)
  return child
}

type Library = 'ioredis' | 'node-redis'

/** A connected client of `library` with the library's fail-fast settings and no `error` listener of its own. */
async function connectedClient(library: Library, url: string): Promise<{ client: Redis | NodeRedisClient; listen: (onError: (error: unknown) => void) => void; drop: () => void }> {
  if (library === 'ioredis') {
    const client = new Redis(url, FAIL_FAST)
    await once(client, 'ready')
    return { client, listen: (onError) => client.on('error', onError), drop: () => client.disconnect() }
  }
  const client = createClient({ url, ...NODE_REDIS_FAIL_FAST })
  await client.connect()
  return {
    client,
    listen: (onError) => client.on('error', onError),
    drop: () => {
      if (client.isOpen) client.destroy()
    },
  }
}

describeRedis('the Redis drivers under faults', () => {
  describe('a call while the connection is down is refused at once, never queued', () => {
    it("ioredis, a client with its default settings: a put and a clear made while Redis is down answer l2: 'failed', count l2_errors, and never land once it is back", async () => {
      const server = await OwnRedis.start()
      // ioredis's defaults: the offline queue on, 20 retries per request, reconnecting for ever.
      const client = new Redis(server.url)
      client.on('error', () => {}) // the outage below is the point
      await once(client, 'ready')
      const prefix = testPrefix('faults-queued')
      const l2 = redisL2({ client, prefix })
      const table = createTable<string>({ name: 't', l2 })
      try {
        expect(await table.fetch('a', () => 'before')).toBe('before')
        const gone = once(client, 'close')
        await server.stop()
        await gone

        const put = await table.put('a', 'put while down')
        const clear = await table.clear()
        const set = outcome(l2.set('t', 'b', { kind: 'value', value: 'set while down', version: 1, ttl: 60_000 }))
        expect(put).toMatchObject({ applied: true, l2: 'failed' })
        expect(clear).toMatchObject({ l2: 'failed' })
        expect(table.stats().l2_timeouts).toBe(0)
        expect(table.stats().l2_errors).toBeGreaterThanOrEqual(2)

        // Back (empty: the server saves nothing). A PING answered on the client's connection comes
        // after everything its offline queue would have sent on reconnecting.
        const back = once(client, 'ready')
        await server.restart()
        await back
        expect(await client.ping()).toBe('PONG')
        expect(set.state).toBe('rejected')
        expect(set.error).toMatchObject({ code: 'ECHOSTORE_REDIS_UNREACHABLE', cause: { name: 'NotConnectedError' } })
        expect(await keysOn(server, prefix)).toEqual([])
      } finally {
        await table.close()
        await l2.close()
        client.disconnect()
      }
    })

    it("ioredis, a client given before it ever connected: a put made while Redis is down answers l2: 'failed', and neither it nor a write-back lands once it is up", async () => {
      const server = await OwnRedis.start()
      await server.stop() // down from the start: the client never connects before the calls
      const client = new Redis(server.url) // ioredis's defaults: the offline queue on
      client.on('error', () => {})
      const prefix = testPrefix('faults-never-ready')
      const l2 = redisL2({ client, prefix })
      const table = createTable<string>({ name: 't', l2 })
      try {
        expect(await table.put('x', 'written while down')).toMatchObject({ applied: true, l2: 'failed' })
        expect(await table.fetch('y', () => 'loaded locally')).toBe('loaded locally')
        expect(table.stats().l2_timeouts).toBe(0)
        const back = new Promise((resolve) => client.once('ready', resolve)) // its connection errors until then are expected
        await server.restart()
        await back
        expect(await client.ping()).toBe('PONG') // after anything its offline queue would have sent
        expect(await keysOn(server, prefix)).toEqual([])
      } finally {
        await table.close()
        await l2.close()
        client.disconnect()
      }
    })
  })

  describe('a client shared by redisL2 and redisBus reports its outage to both', () => {
    for (const library of ['ioredis', 'node-redis'] as const) {
      for (const first of ['redisL2', 'redisBus'] as const) {
        it(`${library}, ${first} made first: each adapter's onError hears the outage once`, async () => {
          const server = await OwnRedis.start()
          const { client, listen, drop } = await connectedClient(library, server.url)
          const prefix = testPrefix('faults-onerror')
          const heard = { l2: [] as unknown[], bus: [] as unknown[] }
          const makeL2 = () => redisL2({ client, prefix, onError: (error) => heard.l2.push(error) })
          const makeBus = () => redisBus({ client, namespace: prefix, onError: (error) => heard.bus.push(error) })
          let l2: RedisL2
          let bus: RedisBus
          if (first === 'redisL2') {
            l2 = makeL2()
            bus = makeBus()
          } else {
            bus = makeBus()
            l2 = makeL2()
          }
          try {
            await bus.subscribed({ timeout: 5_000 })
            // Listening after both adapters: when this hears the client's first error, theirs heard it first.
            const erred = new Promise<void>((resolve) => listen(() => resolve()))
            await server.stop()
            await erred
            expect(heard.l2).toHaveLength(1)
            expect(heard.bus).toHaveLength(1)
          } finally {
            await Promise.all([l2.close(), bus.close()])
            drop()
          }
        })
      }
    }
  })

  describe('close() settles while the server is frozen', () => {
    const variants = [
      { label: 'an ioredis client given', library: 'ioredis' as const, given: true },
      { label: 'a node-redis client given', library: 'node-redis' as const, given: true },
      { label: 'a url (ioredis connections of its own)', library: 'ioredis' as const, given: false },
    ]
    for (const { label, library, given } of variants) {
      it(`${label}: l2.close() and bus.close() both settle`, async () => {
        const server = await OwnRedis.start()
        const made = given ? await connectedClient(library, server.url) : undefined
        made?.listen(() => {})
        const where = made === undefined ? { url: server.url } : { client: made.client }
        const prefix = testPrefix('faults-close')
        const l2 = redisL2({ ...where, prefix, timeout: 100, onError: () => {} })
        const bus = redisBus({ ...where, namespace: prefix, onError: () => {} })
        try {
          await bus.subscribed({ timeout: 5_000 })
          expect(await l2.set('t', 'a', { kind: 'value', value: 1, version: 1, ttl: 60_000 })).toBe(true) // its connection is up
          server.freeze()
          await within(Promise.all([l2.close(), bus.close()]), 5_000, 'l2.close() and bus.close() while the server is frozen')
        } finally {
          made?.drop()
        }
      })
    }

    // Only the node-redis connections a url opens when ioredis is not installed get here: driven directly.
    it('the node-redis driver quits a connection it opened within its bound, a command still waiting for the frozen server', async () => {
      const server = await OwnRedis.start()
      const client = createClient({ url: server.url, ...NODE_REDIS_FAIL_FAST })
      client.on('error', () => {})
      await client.connect()
      const driver = nodeRedisDriver(client as unknown as NodeRedisClient)
      server.freeze()
      // node-redis's close() waits for this reply, which never comes.
      const waiting = client.sendCommand(['PING']).then(
        () => 'answered',
        () => 'rejected',
      )
      await within(driver.quit(100), 5_000, 'quit() while the server is frozen')
      expect(client.isOpen).toBe(false)
      expect(await within(waiting, 5_000, 'the waiting command')).toBe('rejected')
    })
  })
})

describeRedis('an L2 entry the reader takes for corrupt is repaired by the next write', () => {
  const prefix = testPrefix('faults-entry')
  const raw = suiteRedis(prefix)

  /** Entries as something else may leave them: readable headers, and ones `readHeader` refuses. */
  const samples: [label: string, bytes: string][] = [
    ['a value', 'v5:"x"'],
    ['a value with grace', 'v5+1000:"x"'],
    ['a tagged value', 'v5@7#5:["t"]"x"'],
    ['a negative row', 'a5:'],
    ['a tombstone', 't5:'],
    ['a readable header before a payload that does not decode', 'v5:{not json'],
    ['a grace without digits', 'v5+:"x"'],
    ['a grace of 12 digits', 'v5+123456789012:"x"'],
    ['a version of 17 digits', 'v00000000000000005:"x"'],
    ['a version above 2^52', 'v4503599627370497:"x"'],
    ['a birth of 17 digits', 'v5@00000000000000007#0:"x"'],
    ['a tag section without digits', 'v5@x#1:"x"'],
    ['tags past the end of the bytes', 'v5@7#99:["t"]'],
    ['a tombstone with tags', 't5@7#0:'],
    ['an unknown kind', 'x5:"x"'],
    ['no header', 'garbage'],
  ]

  for (const library of ['ioredis', 'node-redis'] as const) {
    describe(`on ${library}`, () => {
      async function store(): Promise<{ l2: RedisL2; close: () => Promise<void> }> {
        const { client, listen, drop } = await connectedClient(library, REDIS_URL)
        listen(() => {})
        const l2 = redisL2({ client, prefix: `${prefix}${library}:`, timeout: 1_000 })
        return { l2, close: async () => (await l2.close(), drop()) }
      }

      it('an entry without an expiry, at a version above the fill’s: a corrupt miss, the fill replaces it, and the next table reads it from L2', async () => {
        const { l2, close } = await store()
        const key = l2Key(`${prefix}${library}:`, 'g', 'noexp')
        await raw().set(key, 'v5:"old"')
        const [a, b] = [createTable<string>({ name: 'g', l2 }), createTable<string>({ name: 'g', l2 })]
        try {
          expect(await a.fetch('noexp', () => 'fresh')).toBe('fresh')
          expect(a.stats()).toMatchObject({ l2_corrupt: 1, fenced: 0, loads: 1 })
          expect(await raw().pttl(key)).toBeGreaterThan(0)
          expect(await b.fetch('noexp', () => 'never')).toBe('fresh')
          expect(b.stats()).toMatchObject({ l2_hits: 1, loads: 0, l2_corrupt: 0 })
        } finally {
          await Promise.all([a.close(), b.close()])
          await close()
        }
      })

      it('a write honours the version of exactly the entries readHeader reads, and only while they have an expiry; a lease read takes them for fills by the same rule', async () => {
        const { l2, close } = await store()
        const own = `${prefix}${library}:`
        try {
          for (const [label, bytes] of samples) {
            const header = readHeader(Buffer.from(bytes, 'latin1'))
            const readable = typeof header !== 'string'
            // With an expiry: a readable header's version 5 refuses a write of version 1; anything else is overwritten.
            await raw().set(l2Key(own, 'expiring', label), bytes, 'PX', 60_000)
            expect({ label, written: await l2.set('expiring', label, { kind: 'value', value: 'repaired', version: 1, ttl: 60_000 }) }).toEqual({ label, written: !readable })
            // Without one: never a version to honour.
            await raw().set(l2Key(own, 'persistent', label), bytes)
            expect({ label, written: await l2.set('persistent', label, { kind: 'value', value: 'repaired', version: 1, ttl: 60_000 }) }).toEqual({ label, written: true })
            expect((await l2.get('persistent', label))?.value).toBe('repaired')
            // A lease read: a readable value or negative row of a version ≥ the floor is a fill (no lease asked); anything else takes the lease, and only a readable entry is answered.
            if (label === 'a readable header before a payload that does not decode') continue
            await raw().set(l2Key(own, 'leased', label), bytes, 'PX', 60_000)
            const fill = readable && header.kind !== 'tombstone'
            const read = await l2.leases!.readOrAcquire!('leased', label, 'token', 5_000, 0)
            expect({ label, lease: read.lease, found: read.entry !== undefined }).toEqual({ label, lease: fill ? 'unasked' : 'taken', found: readable })
          }
        } finally {
          await close()
        }
      })
    })
  }
})
