/**
 * One "process" of the multi-process coherence spec (spec/coherence-multiprocess.spec.ts): a table
 * with a Redis L2 and a Redis bus, driven by its parent over the IPC channel. Not a spec itself.
 *
 * Run as: `node --import tsx spec/support/coherence-node.ts '<NodeConfig as JSON>'` with an IPC
 * channel (`stdio: [..., 'ipc']`). It reports `ready` once its bus is listening, then answers each
 * {@link Command} with one `reply` carrying the command's `seq`. Meanwhile it reports every
 * `coherence` and `gap` event of its table as it happens, stamped with a wall-clock time in ms
 * (`performance.timeOrigin + performance.now()`, comparable across processes on one machine).
 *
 * The origin ("the database") is a plain Redis string per id under `<prefix>source:`; the loader
 * reads it, and `put` writes it before calling `table.put`, as an application would. The loader
 * tags each row with its id's group (the part of a string id before `/`), and `update-group`
 * rewrites the source of a group's ids, then calls `table.invalidateTags([group])`; `source`
 * rewrites the source alone.
 *
 * `exit` closes the table, the bus, the L2 and its own connections, replies, then disconnects the
 * IPC channel and lets the event loop drain: the process exits by itself, with code 0, only if
 * nothing is left holding it open. If the parent goes away first, the process exits with code 2.
 */
import { performance } from 'node:perf_hooks'
import { Redis } from 'ioredis'
import { type Id, type LoaderContext, type Stats, createTable } from '../../src/index.js'
import { redisBus, redisL2 } from '../../src/redis.js'

/** What the parent passes as the one argument. */
export interface NodeConfig {
  /** A label for messages (`A`, `B`, `C`). */
  label: string
  url: string
  /** The L2 key prefix; the source keys live under `<prefix>source:`. */
  prefix: string
  channel: string
  table: string
  /** The bus's connections carry this name, so the subscriber can be found in CLIENT LIST. */
  connectionName: string
}

/** What the parent asks. */
export type Command =
  | { seq: number; op: 'fetch'; id: Id }
  | { seq: number; op: 'put'; id: Id; value: string }
  | { seq: number; op: 'update-group'; group: string; ids: string[]; value: string }
  | { seq: number; op: 'source'; ids: string[]; value: string }
  | { seq: number; op: 'stats' }
  | { seq: number; op: 'kill-subscriber' }
  | { seq: number; op: 'exit' }

/** A put's outcome (its ChangeResult), with when it started and resolved (wall-clock ms). */
export interface PutReply {
  version: number
  applied: boolean
  /** The change reached the bus (Redis accepted the publish within PUBLISH_TIMEOUT). */
  broadcast: boolean
  start: number
  resolved: number
}

/** What the node reports. */
export type Report =
  | { type: 'ready'; pid: number }
  | { type: 'reply'; seq: number; ok: true; result: unknown }
  | { type: 'reply'; seq: number; ok: false; error: string }
  | { type: 'coherence'; id: Id; version: number; applied: boolean; at: number }
  | { type: 'gap'; dropped: number; at: number }
  | { type: 'error'; error: string }

const wallClock = (): number => performance.timeOrigin + performance.now()

function report(message: Report): void {
  if (process.connected) process.send!(message)
}

const config = JSON.parse(process.argv[2] ?? '') as NodeConfig
const busUrl = new URL(config.url)
busUrl.searchParams.set('connectionName', config.connectionName)

const sourceKey = (id: Id): string => `${config.prefix}source:${JSON.stringify(id)}`
const source = new Redis(config.url, { maxRetriesPerRequest: 1 })
source.on('error', () => {})
const admin = new Redis(config.url, { maxRetriesPerRequest: 1, lazyConnect: true })
admin.on('error', () => {})

const bus = redisBus({ url: busUrl.toString(), channel: config.channel, onError: () => {} })
// A generous L2 bound: three processes and a test runner share the machine; a timed-out L2 read
// would turn into a loader call, which is correct but not what the spec measures.
const l2 = redisL2({ url: config.url, prefix: config.prefix, timeout: 2_000 })
const table = createTable<string | undefined, Id>({ name: config.table, l2, bus, ttl: 600_000, jitter: 0, loadTimeout: 10_000 })

table.events.on('coherence', (event) => report({ type: 'coherence', id: event.id, version: event.version, applied: event.applied, at: wallClock() }))
let onGap: ((dropped: number) => void) | undefined
table.events.on('gap', (event) => {
  report({ type: 'gap', dropped: event.dropped, at: wallClock() })
  onGap?.(event.dropped)
})
table.events.on('error', (event) => report({ type: 'error', error: String(event.error) }))

/** The tag of a row: its id's group, the part of a string id before `/` (none for other ids). */
const groupOf = (id: Id): string | undefined => (typeof id === 'string' && id.includes('/') ? id.slice(0, id.indexOf('/')) : undefined)

const loader = async (id: Id, { setTags }: LoaderContext): Promise<string | undefined> => {
  const group = groupOf(id)
  if (group !== undefined) setTags([group])
  return (await source.get(sourceKey(id))) ?? undefined
}

/** Kills this node's own bus subscriber connection (as a network failure would); resolves once the gap is in. */
async function killSubscriber(): Promise<{ killed: string; dropped: number }> {
  if (admin.status === 'wait') await admin.connect()
  const list = String(await admin.call('CLIENT', 'LIST', 'TYPE', 'pubsub'))
  const ids = list
    .split('\n')
    .map((line) => Object.fromEntries(line.split(' ').map((field) => field.split('=', 2) as [string, string])))
    .filter((fields) => fields.name === config.connectionName)
    .map((fields) => fields.id as string)
  if (ids.length !== 1) throw new Error(`expected one subscriber named ${config.connectionName}, found ${ids.length}`)
  const gap = new Promise<number>((resolve) => (onGap = resolve))
  await admin.client('KILL', 'ID', ids[0]!)
  const dropped = await gap
  onGap = undefined
  return { killed: ids[0]!, dropped }
}

let exiting = false

async function shutdown(): Promise<void> {
  await table.close()
  await bus.close()
  await l2.close()
  await source.quit()
  if (admin.status === 'ready') await admin.quit()
  else admin.disconnect()
}

async function run(command: Command): Promise<unknown> {
  switch (command.op) {
    case 'fetch':
      return (await table.fetch(command.id, loader)) ?? null
    case 'put': {
      await source.set(sourceKey(command.id), command.value)
      const start = wallClock()
      const { version, applied, broadcast } = await table.put(command.id, command.value)
      const reply: PutReply = { version, applied, broadcast, start, resolved: wallClock() }
      return reply
    }
    case 'source':
      for (const id of command.ids) await source.set(sourceKey(id), command.value)
      return null
    case 'update-group': {
      for (const id of command.ids) await source.set(sourceKey(id), command.value)
      const start = wallClock()
      const { version, applied, broadcast } = await table.invalidateTags([command.group])
      const reply: PutReply = { version, applied, broadcast, start, resolved: wallClock() }
      return reply
    }
    case 'stats':
      return table.stats() satisfies Stats
    case 'kill-subscriber':
      return killSubscriber()
    case 'exit':
      exiting = true
      await shutdown()
      return null
  }
}

process.on('message', (command: Command) => {
  run(command).then(
    (result) => {
      report({ type: 'reply', seq: command.seq, ok: true, result })
      // Nothing keeps the process alive after this: it must end by itself (the parent checks code 0).
      if (command.op === 'exit') process.disconnect()
    },
    (error: unknown) => report({ type: 'reply', seq: command.seq, ok: false, error: error instanceof Error ? (error.stack ?? error.message) : String(error) }),
  )
})

process.on('disconnect', () => {
  if (!exiting) process.exit(2) // the parent went away: do not linger
})

await bus.subscribed()
report({ type: 'ready', pid: process.pid })
