/**
 * One "process" of the multi-process lease spec (spec/lease-multiprocess.spec.ts): a table with
 * `lease` on, a Redis L2 and a Redis bus, driven by its parent over IPC. Not a spec itself.
 *
 * Run as: `node --import tsx spec/support/lease-node.ts '<LeaseNodeConfig as JSON>'` with an IPC
 * channel. It reports `ready` once its bus listens, then answers each {@link LeaseCommand} with one
 * `reply`. Its loader is a latch the parent holds: each call reports `loading` and waits for a
 * `release` of its id (or for its signal to abort), so the parent decides when, and in which
 * process, a load finishes, and can kill the process that holds a lease mid-load.
 */
import { type Stats, createTable } from '../../src/index.js'
import { createClient } from 'redis'
import { redisBus, redisL2 } from '../../src/redis.js'

/** What the parent passes as the one argument. */
export interface LeaseNodeConfig {
  label: string
  url: string
  prefix: string
  channel: string
  table: string
  lease: { ttl: number; wait: number }
  /** The client library the process uses: ioredis (from the url) by default, or a node-redis `createClient()` client it makes. */
  client?: 'ioredis' | 'node-redis'
}

/** What the parent asks. */
export type LeaseCommand =
  | { seq: number; op: 'herd'; id: string; readers: number }
  | { seq: number; op: 'release'; id: string; value: string }
  | { seq: number; op: 'fetch'; id: string }
  | { seq: number; op: 'invalidate'; id: string }
  | { seq: number; op: 'stats' }
  | { seq: number; op: 'exit' }

/** What a herd answered: each distinct answer, and how many readers got it (errors as `error: …`). */
export type HerdReply = Record<string, number>

/** What the node reports besides replies. */
export type LeaseEvent = { type: 'loading'; id: string; label: string } | { type: 'error'; error: string }

const config = JSON.parse(process.argv[2] ?? '') as LeaseNodeConfig
const report = (message: unknown): void => {
  if (process.connected) process.send!(message)
}

const nodeRedis = config.client === 'node-redis' ? createClient({ url: config.url }) : undefined
nodeRedis?.on('error', () => {})
await nodeRedis?.connect()
const where = nodeRedis === undefined ? { url: config.url } : { client: nodeRedis }
const bus = redisBus({ ...where, channel: config.channel, onError: () => {} })
// A generous L2 bound: four processes and a test runner share two cores.
const l2 = redisL2({ ...where, prefix: config.prefix, timeout: 2_000 })
const table = createTable<string, string>({ name: config.table, l2, bus, ttl: 600_000, jitter: 0, loadTimeout: 20_000, lease: config.lease })
table.events.on('error', (event) => report({ type: 'error', error: String(event.error) } satisfies LeaseEvent))

/** Loads in progress here, by id: the parent releases them. */
const latches = new Map<string, (value: string) => void>()

const loader = (id: string, { signal }: { signal: AbortSignal }) =>
  new Promise<string>((resolve, reject) => {
    latches.set(id, resolve)
    signal.addEventListener('abort', () => reject(signal.reason), { once: true })
    report({ type: 'loading', id, label: config.label } satisfies LeaseEvent)
  })

async function herd(id: string, readers: number): Promise<HerdReply> {
  const answers = await Promise.allSettled(Array.from({ length: readers }, () => table.fetch(id, loader)))
  const tally: HerdReply = {}
  for (const answer of answers) {
    const key = answer.status === 'fulfilled' ? String(answer.value) : `error: ${String(answer.reason)}`
    tally[key] = (tally[key] ?? 0) + 1
  }
  return tally
}

async function run(command: LeaseCommand): Promise<unknown> {
  switch (command.op) {
    case 'herd':
      return herd(command.id, command.readers)
    case 'release': {
      const release = latches.get(command.id)
      latches.delete(command.id)
      release?.(command.value)
      return release !== undefined
    }
    case 'fetch':
      return (await table.fetch(command.id, loader)) ?? null
    case 'invalidate':
      return table.invalidate(command.id)
    case 'stats':
      return table.stats() satisfies Stats
    case 'exit':
      await table.close()
      await Promise.all([bus.close(), l2.close()])
      // The client it made and gave: closed after the adapters, as a user closes theirs.
      await nodeRedis?.close()
      return null
  }
}

process.on('message', (command: LeaseCommand) => {
  run(command).then(
    (result) => {
      report({ type: 'reply', seq: command.seq, ok: true, result })
      if (command.op === 'exit') process.disconnect()
    },
    (error: unknown) => report({ type: 'reply', seq: command.seq, ok: false, error: error instanceof Error ? (error.stack ?? error.message) : String(error) }),
  )
})
process.on('disconnect', () => process.exit(0))

await bus.subscribed()
report({ type: 'ready', pid: process.pid })
