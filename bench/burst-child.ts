/**
 * W8d's child process: `node --import tsx bench/burst-child.ts <prefix> <ids> <loaderMs> <lease 0|1> <client>`,
 * spawned fresh for each round by bench/workloads/w8-burst.ts (a cold process: nothing compiled yet,
 * as at a deploy) with an IPC channel and REDIS_URL in its environment.
 *
 * It connects to Redis with `<client>` (`ioredis` or `node-redis`, answering before it goes on), builds a table `w8-burst` over `redisL2({ client, prefix })`
 * and a `redisBus` (with `lease: true` when asked), and says `ready`. On `go` it fires one `fetch`
 * of each of <ids> cold ids (`burst-0` …) in one synchronous loop, with a <loaderMs> loader on a real
 * timer, awaits them all, answers `result` with its counters and times, then closes and exits 0.
 * Errors go to stderr and to the parent as `failed`.
 */
import { performance } from 'node:perf_hooks'
import { createTable } from '../src/index.js'
import { redisBus, redisL2 } from '../src/redis.js'
import { connectClient, redisClientName } from './lib/redis.js'

/** What the parent sends. */
export type ToBurstChild = { type: 'go' }

/** One process's burst. */
export interface BurstReport {
  /** Loader calls (the origin work this process did). */
  loads: number
  l2Hits: number
  leaseWaited: number
  l2Timeouts: number
  l2Errors: number
  /** L2 calls the breaker skipped: non-zero means a breaker opened. */
  l2Skipped: number
  /** From the first fetch to the last answer, ms. */
  burstMs: number
  /** CPU (user + system) over the burst, ms. */
  cpuMs: number
}

/** What the child sends. */
export type FromBurstChild = { type: 'ready' } | { type: 'result'; report: BurstReport } | { type: 'failed'; message: string }

function send(message: FromBurstChild): void {
  if (process.connected) process.send!(message)
}

async function main(): Promise<void> {
  const [prefix, idsArg, loaderMsArg, leaseArg, clientArg] = process.argv.slice(2)
  if (prefix === undefined || idsArg === undefined || loaderMsArg === undefined || leaseArg === undefined || clientArg === undefined || process.send === undefined) {
    throw new Error('usage: burst-child.ts <prefix> <ids> <loaderMs> <lease 0|1> <ioredis|node-redis> (spawned with an IPC channel by bench/workloads/w8-burst.ts)')
  }
  const ids = Number(idsArg)
  const loaderMs = Number(loaderMsArg)
  const connection = await connectClient(redisClientName(clientArg), process.env.REDIS_URL ?? 'redis://127.0.0.1:6379')
  const client = connection.client
  const l2 = redisL2({ client, prefix })
  const bus = redisBus({ client, channel: `${prefix}bus` })
  await bus.subscribed()
  const table = createTable<{ id: string }>({ name: 'w8-burst', ttl: 60_000, l2, bus, lease: leaseArg === '1' })
  let loads = 0
  const loader = (id: string | number) => new Promise<{ id: string }>((resolve) => (loads++, setTimeout(() => resolve({ id: String(id) }), loaderMs)))
  process.once('message', async () => {
    try {
      const cpu = process.cpuUsage()
      const startedAt = performance.now()
      const answers = new Array<Promise<unknown>>(ids)
      for (let i = 0; i < ids; i++) answers[i] = table.fetch(`burst-${i}`, loader)
      await Promise.all(answers)
      const burstMs = performance.now() - startedAt
      const used = process.cpuUsage(cpu)
      const s = table.stats()
      send({
        type: 'result',
        report: { loads, l2Hits: s.l2_hits, leaseWaited: s.lease_waited, l2Timeouts: s.l2_timeouts, l2Errors: s.l2_errors, l2Skipped: s.l2_skipped, burstMs, cpuMs: (used.user + used.system) / 1000 },
      })
    } finally {
      await table.close()
      await bus.close()
      await l2.close()
      await connection.close()
      if (process.connected) process.disconnect()
    }
  })
  send({ type: 'ready' })
}

main().catch((error: unknown) => {
  const text = error instanceof Error ? (error.stack ?? error.message) : String(error)
  process.stderr.write(`${text}\n`)
  send({ type: 'failed', message: text })
  process.exit(1)
})
