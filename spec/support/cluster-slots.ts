/**
 * Moves one slot of a Redis Cluster between masters by hand, the way `redis-cli --cluster reshard`
 * does (`CLUSTER SETSLOT ... IMPORTING/MIGRATING`, `MIGRATE` per key, `CLUSTER SETSLOT ... NODE`),
 * but one step at a time, so a spec can act while the slot is half moved. Every node is found by
 * asking the cluster (`CLUSTER NODES`), never by port: after a failover the masters are not the
 * ports they started on.
 */
import { setTimeout as delay } from 'node:timers/promises'
import { Redis } from 'ioredis'

/** One node as a `CLUSTER NODES` line describes it. */
export interface ClusterNode {
  id: string
  host: string
  port: number
  /** `master` or `slave`, and `myself`, `fail`, `fail?`, `handshake`, `noaddr`... as Redis prints them. */
  flags: string[]
  /** The master's slot ranges, inclusive (empty for a replica). */
  slots: [number, number][]
  /** On the `myself` line only: slot → node id it is migrating to, and importing from. */
  migrating: Map<number, string>
  importing: Map<number, string>
}

/** Parses the reply of `CLUSTER NODES`. */
export function parseClusterNodes(text: string): ClusterNode[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const [id, address, flags, , , , , , ...slotFields] = line.trim().split(' ')
      // ip:port@cport[,hostname]
      const hostPort = address!.split('@')[0]!
      const colon = hostPort.lastIndexOf(':')
      const node: ClusterNode = {
        id: id!,
        host: hostPort.slice(0, colon),
        port: Number(hostPort.slice(colon + 1)),
        flags: flags!.split(','),
        slots: [],
        migrating: new Map(),
        importing: new Map(),
      }
      for (const field of slotFields) {
        const open = /^\[(\d+)-([<>])-([0-9a-f]+)\]$/.exec(field)
        if (open !== null) {
          ;(open[2] === '>' ? node.migrating : node.importing).set(Number(open[1]), open[3]!)
          continue
        }
        const [from, to] = field.split('-')
        node.slots.push([Number(from), Number(to ?? from)])
      }
      return node
    })
}

const isMaster = (node: ClusterNode) => node.flags.includes('master') && !node.flags.some((f) => f === 'fail' || f === 'noaddr' || f === 'handshake')
const serves = (node: ClusterNode, slot: number) => node.slots.some(([from, to]) => slot >= from && slot <= to)

/** The `(host, port)` of each `redis://host:port` url. */
function addressOf(url: string): { host: string; port: number } {
  const parsed = new URL(url)
  return { host: parsed.hostname, port: Number(parsed.port || 6379) }
}

/**
 * Admin connections to every node of one cluster, one plain (non-cluster) ioredis connection per
 * node, so each command goes exactly where it is sent: no redirection is followed.
 */
export class ClusterAdmin {
  readonly #given: { host: string; port: number }[]
  readonly #connections = new Map<string, Redis>()

  constructor(urls: readonly string[]) {
    this.#given = urls.map(addressOf)
  }

  /** A connection to `host:port` (made once). */
  on(node: { host: string; port: number }): Redis {
    const key = `${node.host}:${node.port}`
    let connection = this.#connections.get(key)
    if (connection === undefined) {
      connection = new Redis({ host: node.host, port: node.port, lazyConnect: false, maxRetriesPerRequest: 1, connectTimeout: 1_000, retryStrategy: () => 200 })
      connection.on('error', () => {})
      this.#connections.set(key, connection)
    }
    return connection
  }

  /** The cluster's nodes as the first node given that answers sees them. */
  async nodes(): Promise<ClusterNode[]> {
    let last: unknown
    for (const node of this.#given) {
      try {
        return parseClusterNodes(String(await this.on(node).call('CLUSTER', 'NODES')))
      } catch (error) {
        last = error
      }
    }
    throw new Error(`no node given of the cluster answers CLUSTER NODES: ${String(last)}`)
  }

  /** The masters that are up, now. */
  async masters(): Promise<ClusterNode[]> {
    return (await this.nodes()).filter(isMaster)
  }

  /** The slot of `key`, as the cluster computes it. */
  async keySlot(key: string): Promise<number> {
    const [master] = await this.masters()
    return Number(await this.on(master!).call('CLUSTER', 'KEYSLOT', key))
  }

  /** The master serving `slot` (as the first node given that answers sees it). */
  async ownerOf(slot: number): Promise<ClusterNode> {
    const owner = (await this.masters()).find((m) => serves(m, slot))
    if (owner === undefined) throw new Error(`no master serves slot ${slot}`)
    return owner
  }

  /** The keys of `slot` held by `node` (whether it serves the slot or not; at most 100,000: a spec's slots hold a few). */
  async keysIn(node: ClusterNode, slot: number): Promise<string[]> {
    return (await this.on(node).call('CLUSTER', 'GETKEYSINSLOT', slot, 100_000)) as string[]
  }

  /** `GET key` on exactly `node`, with `ASKING` first (so a node importing the slot answers too). */
  async getOn(node: ClusterNode, key: string): Promise<string | null> {
    const replies = (await this.on(node).pipeline().asking().get(key).exec()) ?? []
    const [error, value] = replies[1] ?? [new Error(`no reply to GET ${key}`), null]
    if (error) throw error
    return value as string | null
  }

  /** Opens the move of `slot` from `source` to `target`: the target imports it, then the source migrates it. */
  async beginMigration(slot: number, source: ClusterNode, target: ClusterNode): Promise<void> {
    await this.on(target).call('CLUSTER', 'SETSLOT', slot, 'IMPORTING', source.id)
    await this.on(source).call('CLUSTER', 'SETSLOT', slot, 'MIGRATING', target.id)
  }

  /**
   * `MIGRATE`s `keys` from `source` to `target`, never with `REPLACE`: a key the target already holds
   * rejects with Redis's `BUSYKEY` error. Answers `OK` (or `NOKEY` when none of them was there).
   */
  async migrate(source: ClusterNode, target: ClusterNode, keys: readonly string[]): Promise<string> {
    if (keys.length === 0) return 'NOKEY'
    return String(await this.on(source).call('MIGRATE', target.host, target.port, '', 0, 5_000, 'KEYS', ...keys))
  }

  /**
   * Ends the move of `slot` from `source` to `target`: `MIGRATE`s every key the source still holds in
   * it (no `REPLACE`: a collision rejects with `BUSYKEY`, and the slot stays open for
   * {@link returnSlot}), then assigns the slot to the target on the target, the source and every other
   * master, and waits until every node agrees.
   */
  async finishMigration(slot: number, source: ClusterNode, target: ClusterNode): Promise<void> {
    for (let keys = await this.keysIn(source, slot); keys.length > 0; keys = await this.keysIn(source, slot)) {
      for (let i = 0; i < keys.length; i += 100) await this.migrate(source, target, keys.slice(i, i + 100))
    }
    await this.assign(slot, target, source)
  }

  /** `CLUSTER SETSLOT slot NODE owner` on the owner, then `from`, then every other master; then {@link awaitAgreement}. */
  async assign(slot: number, owner: ClusterNode, from: ClusterNode): Promise<void> {
    await this.on(owner).call('CLUSTER', 'SETSLOT', slot, 'NODE', owner.id)
    await this.on(from).call('CLUSTER', 'SETSLOT', slot, 'NODE', owner.id)
    for (const master of await this.masters()) {
      if (master.id !== owner.id && master.id !== from.id) await this.on(master).call('CLUSTER', 'SETSLOT', slot, 'NODE', owner.id)
    }
    await this.awaitAgreement(slot, owner)
  }

  /**
   * Waits (polling, at most `timeout` ms) until every node that is up says `owner` serves `slot`
   * and no master holds it open (importing or migrating). The cluster's own convergence: gossip
   * carries the new owner's config epoch to the replicas.
   */
  async awaitAgreement(slot: number, owner: ClusterNode, timeout = 15_000): Promise<void> {
    const deadline = Date.now() + timeout
    let disagreeing = ''
    for (;;) {
      disagreeing = ''
      for (const node of (await this.nodes()).filter((n) => !n.flags.some((f) => f === 'fail' || f === 'noaddr' || f === 'handshake'))) {
        let view: ClusterNode[]
        try {
          view = parseClusterNodes(String(await this.on(node).call('CLUSTER', 'NODES')))
        } catch (error) {
          disagreeing = `${node.host}:${node.port} does not answer (${String(error)})`
          break
        }
        const says = view.find((n) => isMaster(n) && serves(n, slot))
        const me = view.find((n) => n.flags.includes('myself'))
        if (says?.id !== owner.id || me?.migrating.has(slot) || me?.importing.has(slot)) {
          disagreeing = `${node.host}:${node.port} says slot ${slot} is served by ${says === undefined ? 'nobody' : `${says.host}:${says.port}`}${me?.migrating.has(slot) ? ', migrating' : ''}${me?.importing.has(slot) ? ', importing' : ''}`
          break
        }
      }
      if (disagreeing === '') return
      if (Date.now() > deadline) throw new Error(`the cluster did not agree within ${timeout} ms that ${owner.host}:${owner.port} serves slot ${slot}: ${disagreeing}`)
      await delay(50)
    }
  }

  /** Moves `slot`, keys and all, from its owner `source` to `target` (no `REPLACE`). */
  async moveSlot(slot: number, source: ClusterNode, target: ClusterNode): Promise<void> {
    await this.beginMigration(slot, source, target)
    await this.finishMigration(slot, source, target)
  }

  /**
   * Puts `slot` back on `home` and closes it, whatever state a spec left it in: a move begun or
   * half done (keys on both sides, a `BUSYKEY` collision), or finished to another master. The
   * spec's own keys in the slot (those starting with `ownPrefix`) are deleted on every master first,
   * duplicates included; any other key is moved back to `home` untouched.
   */
  async returnSlot(slot: number, home: ClusterNode, ownPrefix: string): Promise<void> {
    const masters = await this.masters()
    // What each master itself says of the slot (its `myself` line is the only one with open states).
    const views = await Promise.all(
      masters.map(async (master) => {
        const view = parseClusterNodes(String(await this.on(master).call('CLUSTER', 'NODES')))
        return { master, me: view.find((n) => n.flags.includes('myself'))! }
      }),
    )
    // 1. The spec's own keys go, everywhere (ASKING: a master importing the slot deletes too).
    for (const { master } of views) {
      const own = (await this.keysIn(master, slot)).filter((k) => k.startsWith(ownPrefix))
      if (own.length > 0)
        await this.on(master)
          .pipeline()
          .asking()
          .del(...own)
          .exec()
    }
    // 2. Whoever serves the slot now, by the masters' majority.
    const owner = await this.ownerOf(slot)
    // 3. A move left open: keys on a master that does not serve the slot go back to the one that does; then close it.
    const open = views.filter(({ me }) => me.migrating.has(slot) || me.importing.has(slot))
    for (const { master } of views) {
      if (master.id === owner.id) continue
      const strays = await this.keysIn(master, slot)
      if (strays.length > 0 && !open.some(({ master: m }) => m.id === master.id)) {
        throw new Error(`${master.host}:${master.port} holds ${strays.length} keys of slot ${slot} it neither serves nor imports: ${strays.slice(0, 5).join(', ')}`)
      }
      for (let i = 0; i < strays.length; i += 100) await this.migrate(master, owner, strays.slice(i, i + 100))
    }
    for (const { master } of open) await this.on(master).call('CLUSTER', 'SETSLOT', slot, 'STABLE')
    // 4. Back home, keys and all.
    if (owner.id !== home.id) await this.moveSlot(slot, owner, home)
    else await this.awaitAgreement(slot, home)
  }

  /** Deletes every key starting with `prefix` on every master (SCAN, never KEYS). */
  async deleteKeys(prefix: string): Promise<void> {
    for (const master of await this.masters()) {
      let cursor = '0'
      do {
        const [next, keys] = await this.on(master).scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1_000)
        cursor = next
        // One DEL per key: the keys of one scan span many slots.
        for (const key of keys) await this.on(master).del(key)
      } while (cursor !== '0')
    }
  }

  /** Closes every admin connection. */
  close(): void {
    for (const connection of this.#connections.values()) connection.disconnect()
    this.#connections.clear()
  }
}
