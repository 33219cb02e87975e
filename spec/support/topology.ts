/**
 * The Redis topologies of the cluster, Sentinel and Valkey specs, as `.ci/redis-topology.sh` starts
 * them (CI starts them before the tests; `spec/support/topology-setup.ts` does when they are not up).
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import { type Cluster, Redis } from 'ioredis'
import { describe } from 'vitest'
import { pings } from './redis.js'

/** The cluster's seed nodes (3 masters + 3 replicas on 7100-7105). */
export const CLUSTER_PORTS = [7100, 7101, 7102, 7103, 7104, 7105] as const
export const CLUSTER_URLS = CLUSTER_PORTS.map((port) => `redis://127.0.0.1:${port}`)
/** The Sentinel set: master name, and its three sentinels. */
export const SENTINEL_NAME = 'echostore'
export const SENTINELS = [7112, 7113, 7114].map((port) => ({ host: '127.0.0.1', port }))
/** The failover specs' own cluster and Sentinel set (they crash masters): the same shapes on 7130-7135 and 7140-7144. */
export const FAILOVER_CLUSTER_URLS = [7130, 7131, 7132, 7133, 7134, 7135].map((port) => `redis://127.0.0.1:${port}`)
export const FAILOVER_SENTINEL_NAME = 'echostore-failover'
export const FAILOVER_SENTINELS = [7142, 7143, 7144].map((port) => ({ host: '127.0.0.1', port }))
/** The failover Sentinel set's two data servers: one is its master, the other its replica. */
export const FAILOVER_SENTINEL_DATA_PORTS = [7140, 7141] as const
/** The Valkey server's url, when `valkey-server` is installed. */
export const VALKEY_URL = 'redis://127.0.0.1:7120'

/** Where the topology script keeps each server's pid file and data. */
const BASE = process.env.ECHOSTORE_TOPOLOGY_DIR ?? join(process.env.TMPDIR ?? tmpdir(), 'echostore-redis-topology')

/** The script that starts and stops the topologies. */
export const TOPOLOGY_SCRIPT = join(import.meta.dirname, '..', '..', '.ci', 'redis-topology.sh')

/** True when something answers PING on the port. */
export function answers(port: number): Promise<boolean> {
  return pings(`redis://127.0.0.1:${port}`, 500)
}

/** Whether the cluster and the Sentinel set are up, and whether Valkey is; decided at import. */
export const clusterUp = (await Promise.all([...CLUSTER_PORTS, 7110, 7111, ...SENTINELS.map((s) => s.port), 7130, 7140, 7142].map(answers))).every(Boolean)
export const valkeyUp = await answers(7120)

const HOW_TO_START = `start them with: bash ${TOPOLOGY_SCRIPT} start`

/** `describe` for suites that need the cluster and Sentinel set: they always run under CI=true (failing loudly when down), else skip with a message. */
export const describeTopology: typeof describe = ((name: string, fn: () => void) => {
  if (clusterUp || process.env.CI === 'true') return describe(name, fn)
  console.warn(`[skip] "${name}" needs the local Redis Cluster and Sentinel set: ${HOW_TO_START}`)
  return describe.skip(name, fn)
}) as typeof describe

/** `describe` for suites that need Valkey: they skip, with a message, where `valkey-server` is not installed. */
export const describeValkey: typeof describe = ((name: string, fn: () => void) => {
  if (valkeyUp) return describe(name, fn)
  console.warn(`[skip] "${name}" needs valkey-server on 127.0.0.1:7120 (apt-get install valkey-server, then ${HOW_TO_START})`)
  return describe.skip(name, fn)
}) as typeof describe

/** The pid of the server on `port`, from the pid file it wrote. */
export function pidOf(port: number): number {
  return Number(readFileSync(join(BASE, String(port), 'pid'), 'utf8').trim())
}

/** The fields of an `INFO replication` answer. */
async function replication(client: Redis): Promise<Map<string, string>> {
  const text = await client.info('replication')
  // A field's value may hold colons itself (an IPv6 replica's `ip=::1`): split at the first only.
  return new Map(text.split('\r\n').flatMap((line) => (line.includes(':') ? [[line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1)] as [string, string]] : [])))
}

/**
 * Resolves once every replica of the master on `port` holds every write the master had taken when
 * called: each replica is asked its own offset, one round trip after another, until it reaches the
 * master's. A crash after that loses nothing to asynchronous replication (a replica still in its first
 * sync, say), so what a test wrote before it is there after the promotion. The caller's own timeout
 * bounds a replica that never catches up.
 */
export async function replicasHoldAll(port: number): Promise<void> {
  const master = new Redis(port, '127.0.0.1')
  try {
    const info = await replication(master)
    const offset = Number(info.get('master_repl_offset'))
    const replicas = [...info].filter(([field]) => /^slave\d+$/.test(field)).map(([, value]) => Number(/port=(\d+)/.exec(value)![1]))
    if (replicas.length === 0) throw new Error(`the master on ${port} has no replica`)
    await Promise.all(
      replicas.map(async (replicaPort) => {
        const replica = new Redis(replicaPort, '127.0.0.1')
        try {
          for (;;) {
            const at = await replication(replica)
            if (at.get('master_link_status') === 'up' && Number(at.get('slave_repl_offset')) >= offset) return
          }
        } finally {
          replica.disconnect()
        }
      }),
    )
  } finally {
    master.disconnect()
  }
}

/** Kills the server on `port` at once (SIGKILL, by its pid), as a crash would. */
export function crash(port: number): void {
  process.kill(pidOf(port), 'SIGKILL')
}

/** Brings every server of the topologies back (a crashed master rejoins as a replica) and waits until the cluster and sentinels are whole. */
export function restore(): void {
  execFileSync('bash', [TOPOLOGY_SCRIPT, 'start'], { stdio: 'ignore', timeout: 60_000 })
}

/** The masters of the cluster `seed` belongs to, now, as ports with the slot ranges each serves. */
export async function clusterMasters(seed = CLUSTER_URLS[0]!): Promise<{ port: number; slots: [number, number][] }[]> {
  const client = new Redis(seed)
  try {
    const shards = (await client.call('CLUSTER', 'SLOTS')) as [number, number, [string, number, string]][]
    const byPort = new Map<number, [number, number][]>()
    for (const [from, to, [, port]] of shards) byPort.set(port, [...(byPort.get(port) ?? []), [from, to]])
    return [...byPort].map(([port, slots]) => ({ port, slots })).sort((a, b) => a.port - b.port)
  } finally {
    client.disconnect()
  }
}

/** The port of the master among `masters` (from {@link clusterMasters}) that serves `slot`. */
export function portServing(masters: readonly { port: number; slots: [number, number][] }[], slot: number): number {
  const found = masters.find((m) => m.slots.some(([from, to]) => slot >= from && slot <= to))
  if (found === undefined) throw new Error(`no master serves slot ${slot}`)
  return found.port
}

/** The port of the master serving `slot` in the cluster `seed` belongs to. */
export async function masterOfSlot(slot: number, seed = CLUSTER_URLS[0]!): Promise<number> {
  return portServing(await clusterMasters(seed), slot)
}

/** The port of a Sentinel set's master now. */
export async function sentinelMaster(sentinels = SENTINELS, name = SENTINEL_NAME): Promise<number> {
  const sentinel = new Redis(sentinels[0]!)
  try {
    const [, port] = (await sentinel.call('SENTINEL', 'get-master-addr-by-name', name)) as [string, string]
    return Number(port)
  } finally {
    sentinel.disconnect()
  }
}

/**
 * The port of the master every sentinel of the set names, once none names `killed` any more. A
 * sentinel that did not lead the failover learns the new master from the others' hello messages (one
 * every 2 s), so right after a failover they may disagree. Each sentinel is listened to for its
 * `+switch-master` event (which it publishes whether it led the failover or learned of it), then
 * asked: one that names another master already is done, any other is awaited until its event names
 * one. Nothing is polled; the caller's own timeout bounds a failover that never ends.
 */
export async function sentinelsAgreeAfter(killed: number, sentinels = SENTINELS, name = SENTINEL_NAME): Promise<number> {
  const named = await Promise.all(
    sentinels.map(async (address) => {
      const listener = new Redis(address)
      const asker = new Redis(address)
      try {
        // `+switch-master` carries "<name> <old ip> <old port> <new ip> <new port>".
        const switched = new Promise<number>((resolve) =>
          listener.on('message', (_channel: string, text: string) => {
            const [master, , , , port] = text.split(' ')
            if (master === name && Number(port) !== killed) resolve(Number(port))
          }),
        )
        await listener.subscribe('+switch-master')
        const [, port] = (await asker.call('SENTINEL', 'get-master-addr-by-name', name)) as [string, string]
        return Number(port) !== killed ? Number(port) : await switched
      } finally {
        listener.disconnect()
        asker.disconnect()
      }
    }),
  )
  if (new Set(named).size !== 1) throw new Error(`the sentinels name different masters after the failover: ${named.join(', ')}`)
  return named[0]!
}

/**
 * Takes the lock named `name`, shared by every spec process on the machine: a folder made atomically
 * by its one holder, holding the holder's pid. A lock whose holder's process is gone (it died holding
 * it) is taken over. Answers the release.
 */
async function takeLock(name: string): Promise<() => void> {
  const folder = join(tmpdir(), `echostore-${name}.lock`)
  for (;;) {
    try {
      mkdirSync(folder)
      writeFileSync(join(folder, 'pid'), String(process.pid))
      return () => rmSync(folder, { recursive: true, force: true })
    } catch {
      if (!holderAlive(folder)) rmSync(folder, { recursive: true, force: true })
      else await delay(5)
    }
  }
}

/** Whether the process that made the lock `folder` is still running (a lock just made, whose pid is not written yet, counts as held). */
function holderAlive(folder: string): boolean {
  let pid: number
  try {
    pid = Number(readFileSync(join(folder, 'pid'), 'utf8'))
  } catch {
    return true
  }
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH'
  }
}

/**
 * Runs `body`, a spec that pauses a master of the shared cluster (`CLIENT PAUSE`), while no other
 * spec file does: the spec files run in parallel, and a second pause would fail the reads the first
 * counts on the healthy masters.
 */
export async function pausingAMaster<T>(body: () => Promise<T>): Promise<T> {
  const release = await takeLock('cluster-pause')
  try {
    return await body()
  } finally {
    release()
  }
}

/**
 * Takes the failover cluster (7130-7135) for one spec file's suite: the failover specs crash its
 * masters and the slot-migration specs move its slots, and neither may run while the other does.
 * Answers the release; call it once the cluster is back as the suite found it.
 */
export function takeFailoverCluster(): Promise<() => void> {
  return takeLock('failover-cluster')
}

/** Deletes every key under `prefix` on every master of the cluster `admin` is connected to. */
export async function cleanClusterPrefix(admin: Cluster, prefix: string): Promise<void> {
  for (const node of admin.nodes('master')) {
    let cursor = '0'
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1_000)
      cursor = next
      for (const key of keys) await node.del(key)
    } while (cursor !== '0')
  }
}
