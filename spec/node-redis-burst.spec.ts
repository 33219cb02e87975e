/**
 * A burst of misses in one long busy turn on a node-redis client: node-redis writes the turn's
 * commands only when the turn ends (in a `setImmediate`), so an L2 call's timeout must count from
 * then. The turn is made long on the table's manual clock (each miss moves it), so the outcome does
 * not hang on real timing: the clock never moves after the turn, and every reply comes from Redis.
 * And node-redis writes a turn's commands only until its socket holds its high-water mark: with
 * `NODE_REDIS_FAIL_FAST` they all leave in that one write.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import type { Socket } from 'node:net'
import { createClient } from 'redis'
import { expect, it } from 'vitest'
import { createTable } from '../src/index.js'
import { BREAKER_FAILURES, DEFAULT_L2_TIMEOUT } from '../src/limits.js'
import { NODE_REDIS_FAIL_FAST, redisL2 } from '../src/redis.js'
import type { L2Store } from '../src/store.js'
import { manualClock } from '../src/testing.js'
import { REDIS_URL, describeRedis, suiteRedis, testPrefix } from './support/redis.js'

const prefix = testPrefix('node-redis-burst')
/** Misses in the burst: twice the failures that open the breaker. */
const BURST = 2 * BREAKER_FAILURES
/** What each miss costs its turn, in ms of the table's clock: the turn lasts twice the timeout and more. */
const STEP = DEFAULT_L2_TIMEOUT / 4

/** `store`, with each `get` costing the turn `busy()` once it is asked. */
function busyReads(store: L2Store, busy: () => void): L2Store {
  return new Proxy(store, {
    get(target, key) {
      if (key === 'get') {
        return (table: string, id: string | number) => {
          const answer = target.get(table, id)
          busy()
          return answer
        }
      }
      const value: unknown = Reflect.get(target, key, target)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
}

/** The bytes a turn of `count` SETs of 100-byte values hands to the socket of a client made with `options`, by the end of the write that follows the turn. */
async function writtenByOneTurn(options: Parameters<typeof createClient>[0], count: number): Promise<number> {
  const sockets: Socket[] = []
  const opened = (message: unknown) => sockets.push((message as { socket: Socket }).socket)
  subscribe('net.client.socket', opened)
  const client = createClient({ url: REDIS_URL, ...options })
  client.on('error', () => {})
  try {
    await client.connect()
  } finally {
    unsubscribe('net.client.socket', opened)
  }
  expect(sockets).toHaveLength(1)
  const socket = sockets[0]!
  const before = socket.bytesWritten
  const replies: Promise<unknown>[] = []
  for (let i = 0; i < count; i++) replies.push(client.sendCommand(['SET', `${prefix}written:${i}`, 'x'.repeat(100)]))
  // Queued after node-redis's own write of the turn (at the turn's first command), so it runs right after it.
  const written = await new Promise<number>((resolve) => setImmediate(() => resolve(socket.bytesWritten - before)))
  await Promise.all(replies)
  await client.close()
  return written
}

describeRedis('a cold burst on a node-redis client', () => {
  const raw = suiteRedis(prefix)

  it('made with NODE_REDIS_FAIL_FAST, writes every command of a turn in the write that follows it; at the socket default, about 16 KiB of them', async () => {
    const count = 1_000
    await raw().ping() // the suite's own connection is open before the sockets are watched
    expect(await writtenByOneTurn(NODE_REDIS_FAIL_FAST, count)).toBeGreaterThan(count * 100)
    expect(await writtenByOneTurn({}, count)).toBeLessThan((count * 100) / 2)
  })

  it('has its L2 reads answered, not timed out, when the turn that made them outlasted the timeout', async () => {
    const client = createClient({ url: REDIS_URL, RESP: 3 })
    client.on('error', () => {})
    await client.connect()
    const store = redisL2({ client, prefix })
    const ids = Array.from({ length: BURST }, (_, i) => `k${i}`)
    for (const id of ids) await store.set('burst', id, { kind: 'value', value: `in L2 ${id}`, version: 1, ttl: 60_000 })
    const clock = manualClock(0)
    const table = createTable<string>({ name: 'burst', ttl: 60_000, clock, l2: busyReads(store, () => clock.advance(STEP)), sweepInterval: 1e9 })
    let loads = 0
    const answers = await Promise.all(ids.map((id) => table.fetch(id, () => (loads++, 'from origin'))))
    expect(clock.now()).toBeGreaterThan(2 * DEFAULT_L2_TIMEOUT)
    expect(answers).toEqual(ids.map((id) => `in L2 ${id}`))
    expect(table.stats()).toMatchObject({ l2_hits: BURST, l2_timeouts: 0, l2_skipped: 0, loads: 0 })
    expect(loads).toBe(0)
    await table.close()
    await store.close()
    await client.close()
  })
})
