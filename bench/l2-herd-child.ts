/**
 * W8b's child process: `node --import tsx bench/l2-herd-child.ts <prefix> <herd> <loaderMs> <client>`,
 * spawned by bench/workloads/w8-l2.ts with an IPC channel and REDIS_URL in its environment.
 *
 * It connects to Redis (its own connection, answering before it goes on) with `<client>`: `ioredis`
 * or `node-redis` (`createClient({ url })` + `connect()`), and says `ready`. Then, per round:
 * `prepare {id, lease}` builds a fresh table (cold L1) named `w8-herd` over `redisL2({ client, prefix })`
 * (with `lease: true` and a `redisBus` on `<prefix>bus` when `lease`) and answers `prepared`;
 * `go {delayMs}` waits `delayMs` (a real timer), then issues <herd> `fetch(id)` calls in one
 * synchronous loop, awaits them all, and answers `result` with its counters and each fetch's latency. The loader takes <loaderMs> on a real timer and counts its calls. `exit` (or the parent
 * going away) closes the table, the bus, the store and then the client and ends the process with status 0.
 * The child writes nothing on stdout; errors go to stderr and to the parent as `failed`.
 */
import { performance } from 'node:perf_hooks'
import { createTable, type Table } from '../src/index.js'
import { type RedisBus, redisBus, redisL2 } from '../src/redis.js'
import { connectClient, redisClientName } from './lib/redis.js'
import { sleep } from './lib/sleep.js'

/** What the parent sends. */
export type ToChild = { type: 'prepare'; id: string; lease: boolean } | { type: 'go'; delayMs: number } | { type: 'exit' }

/** One process's part of one round. Instants are epoch ms with sub-ms precision (comparable across processes). */
export interface HerdReport {
  pid: number
  /** The delay the parent asked for before the herd started. */
  delayMs: number
  /** Calls the loader received (the origin work this process did). */
  loaderCalls: number
  /** The table's counters after the herd. */
  loads: number
  l2Hits: number
  coalesced: number
  /** l2_errors + l2_timeouts + l2_skipped: L2 calls that did not answer (such a miss goes to the loader). */
  l2Failures: number
  /** When the first fetch was issued, and when the last answer arrived. */
  startedAt: number
  doneAt: number
  herdMs: number
  /** Fetches answered, whether every answer was the same object with the right id, and whether another process loaded it. */
  answered: number
  identical: boolean
  fromOtherProcess: boolean
  /** The table's lease counters after the herd (0 without `lease`). */
  leaseAcquired: number
  leaseWaited: number
  leaseLost: number
  /** Each fetch's latency in ms (its call → its answer), in call order: the first is the one that started the flight. */
  latenciesMs: number[]
}

/** What the child sends. */
export type FromChild = { type: 'ready'; pid: number } | { type: 'prepared' } | { type: 'result'; report: HerdReport } | { type: 'failed'; message: string }

/** The row: which process loaded it travels with it through L2. */
interface Value {
  id: string
  loadedBy: number
}

const TABLE = 'w8-herd'
const now = () => performance.timeOrigin + performance.now()

function send(message: FromChild): void {
  if (process.connected) process.send!(message)
}

async function main(): Promise<void> {
  const [prefix, herdArg, loaderMsArg, clientArg] = process.argv.slice(2)
  if (prefix === undefined || herdArg === undefined || loaderMsArg === undefined || clientArg === undefined)
    throw new Error('usage: l2-herd-child.ts <prefix> <herd> <loaderMs> <ioredis|node-redis> (with an IPC channel)')
  if (process.send === undefined) throw new Error('l2-herd-child.ts needs an IPC channel (it is spawned by bench/workloads/w8-l2.ts)')
  const herd = Number(herdArg)
  const loaderMs = Number(loaderMsArg)
  const connection = await connectClient(redisClientName(clientArg), process.env.REDIS_URL ?? 'redis://127.0.0.1:6379')
  const client = connection.client
  // On a cluster (its seed nodes comma-separated), the adapters open their own connections from the urls.
  const cluster = process.env.ECHOSTORE_CLUSTER_URLS?.split(',')
  const where = cluster === undefined ? { client } : { url: cluster }
  const l2 = redisL2({ ...where, prefix })
  let bus: RedisBus | undefined
  let table: Table<Value> | undefined
  let id = ''
  let calls = 0
  const loader = (key: string | number) =>
    new Promise<Value>((resolve) => {
      calls++
      setTimeout(() => resolve({ id: String(key), loadedBy: process.pid }), loaderMs)
    })

  let stopping: Promise<void> | undefined
  function stop(code: number): Promise<void> {
    stopping ??= (async () => {
      // Safety net: an unref'd timer fires only if something still holds the loop open.
      setTimeout(() => process.exit(code), 2_000).unref()
      try {
        await table?.close()
        await bus?.close()
        await l2.close()
      } finally {
        await connection.close()
        process.exitCode = code
        if (process.connected) process.disconnect()
      }
    })()
    return stopping
  }

  async function handle(message: ToChild): Promise<void> {
    switch (message.type) {
      case 'prepare': {
        await table?.close()
        if (message.lease && bus === undefined) {
          bus = redisBus({ ...where, channel: `${prefix}bus` })
          await bus.subscribed()
        }
        table = createTable<Value>({ name: TABLE, ttl: 60_000, sweepInterval: 60_000, l2, ...(message.lease && { lease: true, bus }) })
        id = message.id
        calls = 0
        send({ type: 'prepared' })
        return
      }
      case 'go': {
        if (table === undefined) throw new Error('go before prepare')
        if (message.delayMs > 0) await sleep(message.delayMs)
        const waiting = new Array<Promise<Value | undefined>>(herd)
        const latenciesMs = new Array<number>(herd)
        const startedAt = now()
        for (let i = 0; i < herd; i++) {
          const calledAt = now()
          waiting[i] = table.fetch(id, loader).then((value) => ((latenciesMs[i] = now() - calledAt), value))
        }
        const answers = await Promise.all(waiting)
        const doneAt = now()
        const s = table.stats()
        const first = answers[0]
        send({
          type: 'result',
          report: {
            pid: process.pid,
            delayMs: message.delayMs,
            loaderCalls: calls,
            loads: s.loads,
            l2Hits: s.l2_hits,
            coalesced: s.coalesced,
            l2Failures: s.l2_errors + s.l2_timeouts + s.l2_skipped,
            startedAt,
            doneAt,
            herdMs: doneAt - startedAt,
            answered: answers.length,
            identical: first !== undefined && first.id === id && answers.every((a) => a === first),
            fromOtherProcess: first !== undefined && first.loadedBy !== process.pid,
            leaseAcquired: s.lease_acquired,
            leaseWaited: s.lease_waited,
            leaseLost: s.lease_lost,
            latenciesMs,
          },
        })
        return
      }
      case 'exit':
        await stop(0)
        return
    }
  }

  process.on('message', (message: ToChild) => {
    handle(message).catch((error: unknown) => {
      const text = error instanceof Error ? (error.stack ?? error.message) : String(error)
      process.stderr.write(`${text}\n`)
      send({ type: 'failed', message: text })
      void stop(1)
    })
  })
  // The parent went away (it ended, or killed the channel): leave too.
  process.on('disconnect', () => void stop(stopping === undefined ? 1 : 0))
  send({ type: 'ready', pid: process.pid })
}

main().catch((error: unknown) => {
  const text = error instanceof Error ? (error.stack ?? error.message) : String(error)
  process.stderr.write(`${text}\n`)
  send({ type: 'failed', message: text })
  process.exit(1)
})
