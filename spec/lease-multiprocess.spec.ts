/**
 * Leases across real processes: four Node child processes (spec/support/lease-node.ts), each with
 * its own table (`lease` on), a Redis L2 and a Redis bus on one prefix and channel, driven over IPC.
 *
 * - 4 processes × 200 concurrent readers of one cold id, sent together: exactly one load across
 *   the processes and 800 equal answers, in each of 10 rounds.
 * - The process holding the lease is killed (SIGKILL) mid-load: the others all answer, with one
 *   more load after the lease's ttl, counted `lease_lost`; nothing hangs.
 * - An invalidate during a lease: afterwards no process answers the value loaded before it, from
 *   L1 or L2.
 * - Redis going away (a server of the spec's own, stopped): a herd in one process is still one
 *   load, and no fetch fails.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { createServer } from 'node:net'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createTable } from '../src/index.js'
import { redisL2 } from '../src/redis.js'
import { within } from './support/ipc-child.js'
import { LeaseNode, herdRound, nextLoading, sumOf } from './support/lease-nodes.js'
import { latchedLoader } from './support/latch.js'
import type { LeaseEvent } from './support/lease-node.js'
import { REDIS_URL, cleanPrefix, describeRedis, testPrefix } from './support/redis.js'

const TABLE = 'availability'
const ROUNDS = 10
const READERS = 200

type Loading = Extract<LeaseEvent, { type: 'loading' }>
/** A short lease, so the killed holder's is taken over within the test. */
const LEASE = { ttl: 1_500, wait: 6_000 }

for (const client of ['ioredis', 'node-redis'] as const)
  describeRedis(`leases across four processes on one Redis, each on ${client}`, () => {
    const prefix = testPrefix(`lease-mp-${client}`)
    const nodes: LeaseNode[] = []
    let admin: Redis

    beforeAll(async () => {
      admin = new Redis(REDIS_URL)
      for (const label of ['A', 'B', 'C', 'D']) {
        nodes.push(new LeaseNode(label, { label, url: REDIS_URL, prefix, channel: `${prefix}bus`, table: TABLE, lease: LEASE, client }))
      }
      await within(Promise.all(nodes.map((n) => n.ready)), 30_000, 'four processes ready')
    }, 40_000)

    afterAll(async () => {
      for (const node of nodes) if (node.alive) node.child.kill('SIGKILL')
      await cleanPrefix(admin, prefix)
      await admin.quit()
    })

    it(`4 processes × ${READERS} readers of one cold id: one load and ${4 * READERS} equal answers, in each of ${ROUNDS} rounds`, async () => {
      for (let round = 0; round < ROUNDS; round++) await herdRound(nodes, round, READERS)
      const stats = await Promise.all(nodes.map((n) => n.stats()))
      expect(sumOf(stats, 'loads')).toBe(ROUNDS)
      expect(sumOf(stats, 'lease_acquired')).toBe(ROUNDS)
      // Every other process answered from L2: most through the lease (waiting on the holder), some by a
      // read that came after the fill.
      expect(sumOf(stats, 'l2_hits')).toBe(3 * ROUNDS)
      expect(sumOf(stats, 'lease_waited')).toBeGreaterThan(0)
      expect(sumOf(stats, 'lease_lost')).toBe(0)
      for (const s of stats) {
        expect(s.lease_waited).toBeLessThanOrEqual(s.l2_hits)
        expect(s.misses).toBe(s.flights + s.coalesced)
      }
    }, 120_000)

    it('the holder killed mid-load: the others all answer, with one more load after the lease’s ttl, counted lease_lost', async () => {
      const id = 'doomed'
      const herds = nodes.map((n) => n.herd(id, 50).catch((error: unknown) => ({ died: String(error) })))
      const first = await nextLoading(nodes, id)
      const victim = nodes.find((n) => n.label === first.label)!
      victim.child.kill('SIGKILL')
      await victim.exited
      const survivors = nodes.filter((n) => n !== victim)
      const second = await nextLoading(survivors, id) // taken over once the dead lease ran out
      const value = `loaded by ${second.label} after ${first.label} died`
      await survivors.find((n) => n.label === second.label)!.request({ op: 'release', id, value })
      const answers = await Promise.all(herds)
      for (const [i, node] of nodes.entries()) if (node !== victim) expect(answers[i]).toEqual({ [value]: 50 })
      expect(survivors.reduce((n, node) => n + node.loadings(id), 0)).toBe(1)
      const stats = await Promise.all(survivors.map((n) => n.stats()))
      expect(sumOf(stats, 'lease_lost')).toBe(1)
      nodes.splice(nodes.indexOf(victim), 1)
    }, 60_000)

    it('an invalidate during a lease: afterwards no process answers the value loaded before it, from L1 or L2', async () => {
      const id = 'changing'
      const [P, Q, R] = nodes as [LeaseNode, LeaseNode, LeaseNode]
      const herdP = P.herd(id, 20)
      const holder = await nextLoading([P], id)
      expect(holder.label).toBe(P.label)
      const herdQ = Q.herd(id, 20) // waits on P's lease
      // Q's flight is running (reading L2 or waiting on P's lease) before the origin changes.
      while ((await Q.stats()).inflight === 0) {}
      await R.request({ op: 'invalidate', id }) // the origin changed while P loads
      const waiterLoad = await nextLoading([Q], id) // Q, woken by the bus, loads afresh
      expect(waiterLoad.label).toBe(Q.label)
      await Q.request({ op: 'release', id, value: 'after the change' })
      await P.request({ op: 'release', id, value: 'before the change' })
      expect(await herdQ).toEqual({ 'after the change': 20 })
      await herdP // its callers asked before the change
      // Every process reads the id now: from its row, from L2, or by a load the test releases at once.
      for (const node of nodes) {
        const loadsBefore = node.loadings(id)
        const read = node.request<string | null>({ op: 'fetch', id })
        const loaded = node
          .event((e): e is Loading => e.type === 'loading' && e.id === id && node.loadings(id) > loadsBefore, 'a later load')
          .then(
            () => node.request({ op: 'release', id, value: 'loaded afterwards' }),
            () => undefined, // answered without a load
          )
        expect(await read).not.toBe('before the change')
        void loaded
      }
      const raw = await admin.get(`${prefix}{${JSON.stringify([TABLE, id])}}`)
      expect(raw ?? '').not.toContain('before the change')
    }, 60_000)
  })

describeRedis('a lease table when Redis goes away', () => {
  it('a herd in one process is still one load, and no fetch fails', async () => {
    const port = await freePort()
    const server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'ignore'] })
    await readyLine(server, port)
    // The store's connection is up before the table serves (a read made while it connects may time out).
    const client = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 1, connectTimeout: 1_000, retryStrategy: () => 100 })
    client.on('error', () => {}) // the outage below is the point
    await client.ping()
    const l2 = redisL2({ client, prefix: testPrefix('lease-down'), timeout: 50 })
    const table = createTable<string | undefined>({ name: TABLE, l2, lease: true, loadTimeout: 5_000 })
    try {
      expect(await table.fetch('warm', () => 'up')).toBe('up') // Redis answered: the table works with it
      await stop(server)
      const origin = latchedLoader<string>()
      let called!: () => void
      const firstCall = new Promise<void>((resolve) => (called = resolve))
      const loader: typeof origin.loader = (id, context) => (called(), origin.loader(id, context))
      const answers = Array.from({ length: 200 }, () => table.fetch('hot', loader))
      await within(firstCall, 5_000, 'the loader called once L2 failed')
      origin.only().resolve('loaded locally')
      const values = await within(Promise.all(answers), 5_000, 'every fetch answered')
      expect(values.every((value) => value === 'loaded locally')).toBe(true)
      expect(table.stats()).toMatchObject({ loads: 2, lease_acquired: 1, lease_waited: 0 })
      expect(table.stats().l2_errors + table.stats().l2_timeouts + table.stats().l2_skipped).toBeGreaterThan(0)
    } finally {
      await table.close()
      await l2.close()
      client.disconnect()
      if (server.exitCode === null) await stop(server)
    }
  }, 30_000)
})

/** A port nothing listens on now. */
async function freePort(): Promise<number> {
  const probe = createServer().listen(0, '127.0.0.1')
  await once(probe, 'listening')
  const { port } = probe.address() as { port: number }
  probe.close()
  return port
}

/** Resolves once `server` prints that it accepts connections (its own readiness line, no polling). */
function readyLine(server: ChildProcess, port: number): Promise<void> {
  const ready = new Promise<void>((resolve, reject) => {
    let seen = ''
    server.stdout!.setEncoding('utf8')
    server.stdout!.on('data', (chunk: string) => {
      seen = (seen + chunk).slice(-4_096)
      if (seen.includes('Ready to accept connections')) resolve()
    })
    server.once('exit', (code) => reject(new Error(`redis-server on port ${port} exited (${code}) before it was ready`)))
  })
  return within(ready, 10_000, `redis-server on port ${port}`)
}

/** Stops the server this spec started (only that process). */
async function stop(server: ChildProcess): Promise<void> {
  server.kill('SIGTERM')
  await once(server, 'exit')
}
