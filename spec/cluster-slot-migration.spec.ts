/**
 * The Redis L2 while a Cluster slot moves between masters (a reshard), in the bucket of a cleared
 * table: after `clear(table)` the bucket's generation N > 0 and an id's entry lives under
 * `entryKey(..., N)` (`<base>:<N>`) beside the bucket's generation key `...}:gen`. `MIGRATE` moves
 * a slot's keys one by one, so for a while some of the bucket's keys are on the target master T
 * and the others on the source S: the entry moved and the generation key not yet, or the other way
 * round. A call made then must not act as if the bucket held no entry: an older write must not land
 * beside the newer entry (written, then colliding with it on `MIGRATE`, `BUSYKEY`, or served in its
 * place), a read must not miss it, and a version minted then must be above it.
 *
 * The slot is moved by hand, one step at a time (`support/cluster-slots.ts`): the target imports
 * it, the source migrates it, part of its keys are `MIGRATE`d, the call under test is made and
 * awaited, then the rest of the slot's keys are `MIGRATE`d (never with `REPLACE`) and the slot is
 * assigned to the target on every master. Every node is found by asking the cluster. Whatever
 * happens, the slot goes back to its master afterwards, and the cluster is left as it was found.
 * Each case runs on an ioredis `Cluster` and on a node-redis `createCluster()` client. The spec
 * moves a slot of the failover specs' cluster, holding it (`takeFailoverCluster`): it never runs
 * while `redis-failover.spec.ts` kills that cluster's masters.
 */
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { Cluster } from 'ioredis'
import { createCluster } from 'redis'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createTable } from '../src/index.js'
import { entryKey, generationKey, versionKey } from '../src/l2/keys.js'
import { NODE_REDIS_FAIL_FAST, redisL2, type RedisL2, type RedisL2Client } from '../src/redis.js'
import { ClusterAdmin, type ClusterNode } from './support/cluster-slots.js'
import { testPrefix } from './support/redis.js'
import { FAILOVER_CLUSTER_URLS, describeTopology, takeFailoverCluster } from './support/topology.js'

/** The cluster the spec reshards: the failover specs' own (3 masters + 3 replicas); the masters are found by asking it. */
const CLUSTER_URLS = FAILOVER_CLUSTER_URLS

/**
 * Which keys of the slot `MIGRATE` moves before the call under test: the id's entry alone (the
 * bucket's generation key stays behind, on the source), or every key of the slot but the entry
 * (the generation key is on the target, the entry still on the source). `MIGRATE` moves keys in
 * whatever order `CLUSTER GETKEYSINSLOT` lists them, so a reshard passes through either.
 */
type Order = 'entry first' | 'entry last'
const ORDERS: Order[] = ['entry first', 'entry last']

/** An entry at `version` whose value names it. */
const at = (version: number) => ({ kind: 'value' as const, value: `version ${version}`, version, ttl: 600_000 })

/** What a call came to: its answer, or the message it rejected with. */
type Outcome<T> = { answered: T } | { rejected: string }
function settle<T>(promise: Promise<T>): Promise<Outcome<T>> {
  return promise.then(
    (answered) => ({ answered }),
    (error: unknown) => ({ rejected: error instanceof Error ? `${error.name}: ${error.message}${error.cause instanceof Error ? ` (cause: ${error.cause.message})` : ''}` : String(error) }),
  )
}

/** A client of one driver on the cluster, ready, and how to close it. */
interface Driver {
  name: string
  open(): Promise<{ client: RedisL2Client; close(): void }>
}

const startupNodes = () =>
  CLUSTER_URLS.map((url) => {
    const { hostname, port } = new URL(url)
    return { host: hostname, port: Number(port || 6379) }
  })

const DRIVERS: Driver[] = [
  {
    name: 'an ioredis Cluster',
    async open() {
      const client = new Cluster(startupNodes(), { scaleReads: 'master' })
      client.on('error', () => {})
      if (client.status !== 'ready') await once(client, 'ready')
      return { client, close: () => client.disconnect() }
    },
  },
  {
    name: 'a node-redis createCluster()',
    async open() {
      const client = createCluster({ rootNodes: CLUSTER_URLS.map((url) => ({ url })), defaults: NODE_REDIS_FAIL_FAST })
      client.on('error', () => {})
      await client.connect()
      return { client, close: () => void client.destroy() }
    },
  },
]

describeTopology('the Redis L2 while a slot of a cleared bucket moves between masters', () => {
  const admin = new ClusterAdmin(CLUSTER_URLS)
  let release: (() => void) | undefined
  beforeAll(async () => {
    release = await takeFailoverCluster()
  }, 600_000)
  afterAll(() => release?.())
  /** What each test must undo, in reverse order: slots to put back, keys to delete, clients to close. */
  const undo: (() => Promise<void> | void)[] = []

  afterEach(async () => {
    const errors: unknown[] = []
    for (const step of undo.splice(0).reverse()) {
      try {
        await step()
      } catch (error) {
        errors.push(error)
      }
    }
    admin.close()
    if (errors.length > 0) throw new AggregateError(errors, `cleanup failed: ${errors.map(String).join('; ')}`)
  }, 60_000)

  /** A client of `driver`, closed after the test. */
  async function clientOf(driver: Driver): Promise<RedisL2Client> {
    const { client, close } = await driver.open()
    undo.push(close)
    return client
  }

  /** A store on a client of `driver` under `prefix`, closed (before its client) after the test. */
  async function storeOf(driver: Driver, prefix: string, timeout?: number): Promise<RedisL2> {
    const client = await clientOf(driver)
    const store = redisL2({ client, prefix, ...(timeout === undefined ? {} : { timeout }), onError: () => {} })
    undo.push(() => store.close())
    return store
  }

  /** A fresh key prefix, whose keys are deleted after the test. */
  function prefixOf(label: string): string {
    const prefix = testPrefix(`reshard-${label}`)
    undo.push(() => admin.deleteKeys(prefix))
    return prefix
  }

  /**
   * Opens the move of the slot holding `key` (an id's entry in a cleared bucket) from its master S
   * to another master T, and `MIGRATE`s part of it, as `order` says: the entry key alone (the
   * bucket's generation key, the id's version key and generation-0 entry stay on S), or every other
   * key of the slot (the entry alone stays on S). The slot goes back to S after the test.
   */
  async function halfMove(key: string, prefix: string, order: Order): Promise<{ slot: number; source: ClusterNode; target: ClusterNode }> {
    const slot = await admin.keySlot(key)
    const source = await admin.ownerOf(slot)
    const target = (await admin.masters()).sort((a, b) => a.port - b.port).find((m) => m.id !== source.id)
    if (target === undefined) throw new Error('the cluster has a single master: nowhere to move a slot')
    undo.push(() => admin.returnSlot(slot, source, prefix))
    await admin.beginMigration(slot, source, target)
    // Only the spec's own keys are looked at: another client's keys may share the slot.
    const own = async (node: ClusterNode) => (await admin.keysIn(node, slot)).filter((k) => k.startsWith(prefix))
    if (order === 'entry first') {
      expect(await admin.migrate(source, target, [key])).toBe('OK')
      expect(await own(target)).toEqual([key])
    } else {
      const others = (await admin.keysIn(source, slot)).filter((k) => k !== key)
      expect(await admin.migrate(source, target, others)).toBe('OK')
      expect(await own(source)).toEqual([key])
    }
    return { slot, source, target }
  }

  /** The key of the entry a cleared bucket holds for (table, id) in `prefix`: the generation the cluster holds, past 0. */
  async function clearedEntryKey(prefix: string, table: string, id: string): Promise<string> {
    const slot = await admin.keySlot(generationKey(prefix, table, id))
    const generation = Number(await admin.getOn(await admin.ownerOf(slot), generationKey(prefix, table, id)))
    expect(generation).toBeGreaterThan(0)
    return entryKey(prefix, table, id, generation)
  }

  /**
   * A store of `driver` whose bucket of (table, `row`) was cleared after an entry at version 1, then
   * holds an entry at version 10 (`before`, if given, runs between the first write and the clear),
   * and that entry's key.
   */
  async function clearedBucket(driver: Driver, label: string, before?: (store: RedisL2, table: string, id: string) => Promise<void>) {
    const prefix = prefixOf(label)
    const table = `cleared-${randomBytes(4).toString('hex')}`
    const id = 'row'
    const store = await storeOf(driver, prefix)
    expect(await store.set(table, id, at(1))).toBe(true)
    await before?.(store, table, id)
    await store.clear(table)
    expect(await store.set(table, id, at(10))).toBe(true)
    return { prefix, table, id, store, newer: await clearedEntryKey(prefix, table, id) }
  }

  for (const driver of DRIVERS) {
    describe.each(ORDERS)(`on ${driver.name} client, %s`, (order) => {
      it('a write during a slot migration of a cleared bucket never lands beside the newer entry, and the newer entry survives the reshard', async () => {
        const { prefix, table, id, store, newer } = await clearedBucket(driver, 'set')

        const { slot, source, target } = await halfMove(newer, prefix, order)

        // An older write, routed to S: it may be refused or fail (TRYAGAIN/ASK, retried for a while), never written.
        const older = await settle(store.set(table, id, at(5)))
        // The entry key must be on one master only: S or T, never both.
        const copies = (await Promise.all([source, target].map(async (node) => ((await admin.keysIn(node, slot)).includes(newer) ? [`${node.host}:${node.port}`] : [])))).flat()
        expect.soft(older, 'set(version 5) while the slot is half moved reports written').not.toEqual({ answered: true })
        expect.soft(copies, `${newer} is on both the source and the target`).toHaveLength(1)

        // The rest of the slot moves (no REPLACE: a key on both sides is BUSYKEY), and the slot is T's.
        const finished = await settle(admin.finishMigration(slot, source, target))
        expect.soft(finished, 'the rest of the slot does not MIGRATE to T').toEqual({ answered: undefined })

        const read = await settle(store.get(table, id))
        const fresh = await settle((await storeOf(driver, prefix)).get(table, id))
        expect.soft(read, 'get after the reshard').toMatchObject({ answered: { version: 10, value: 'version 10' } })
        expect.soft(fresh, 'get after the reshard, on a fresh client').toMatchObject({ answered: { version: 10, value: 'version 10' } })
      }, 60_000)

      it('a read during a slot migration of a cleared bucket answers the newer entry or fails, never a miss', async () => {
        const { prefix, table, id, store, newer } = await clearedBucket(driver, 'get')

        const { slot, source, target } = await halfMove(newer, prefix, order)

        // A miss here sends the table to its loader and its write-back into the half-moved bucket.
        const read = await settle(store.get(table, id))
        if ('answered' in read) expect.soft(read.answered, 'get while the slot is half moved').toMatchObject({ version: 10, value: 'version 10' })

        const finished = await settle(admin.finishMigration(slot, source, target))
        expect.soft(finished, 'the rest of the slot does not MIGRATE to T').toEqual({ answered: undefined })
        expect.soft(await settle(store.get(table, id)), 'get after the reshard').toMatchObject({ answered: { version: 10 } })
      }, 60_000)

      it('a version minted during a slot migration of a cleared bucket is above the newer entry', async () => {
        // The id's version counter exists (and stays on S): 2; the newer entry has a version of its own (a database's row version), above it.
        const { prefix, table, id, store, newer } = await clearedBucket(driver, 'mint', async (first, name, key) => {
          expect(await first.nextVersion(name, key, 0)).toBe(2)
        })
        expect(await admin.keySlot(versionKey(prefix, table, id))).toBe(await admin.keySlot(newer))

        const { slot, source, target } = await halfMove(newer, prefix, order)

        // Routed to S: it must count the newer entry on T (or fail), never mint at or below its version.
        const minted = await settle(store.nextVersion(table, id, 0))
        if ('answered' in minted) expect.soft(minted.answered, 'nextVersion while the slot is half moved (the entry holds version 10)').toBeGreaterThan(10)

        const finished = await settle(admin.finishMigration(slot, source, target))
        expect.soft(finished, 'the rest of the slot does not MIGRATE to T').toEqual({ answered: undefined })
        if ('answered' in minted) {
          // What the version minted is for: a write at it must land over the newer entry.
          const written = await settle(store.set(table, id, at(minted.answered)))
          expect.soft(written, `set at the minted version ${minted.answered} after the reshard`).toEqual({ answered: true })
        }
      }, 60_000)

      it('a put of an older version during a slot migration of a cleared table is never served after the reshard', async () => {
        const prefix = prefixOf('table')
        const name = `cleared-${randomBytes(4).toString('hex')}`
        const id = 'row'
        // A long L2 timeout: each put waits for Redis's own answer (retries included), so the outcome is the store's.
        const l2 = await storeOf(driver, prefix, 10_000)
        const writer = createTable<string>({ name, ttl: 600_000, l2 })
        undo.push(() => writer.close())
        await writer.put(id, 'first', { version: 1 })
        expect((await writer.clear()).l2).toBe('cleared')
        expect((await writer.put(id, 'newer', { version: 10 })).l2).toBe('written')
        const newer = await clearedEntryKey(prefix, name, id)

        const { slot, source, target } = await halfMove(newer, prefix, order)

        // Another process (its L1 knows nothing of the id) puts an older version.
        const other = createTable<string>({ name, ttl: 600_000, l2 })
        undo.push(() => other.close())
        const put = await settle(other.put(id, 'older', { version: 5 }))
        expect.soft(put, 'put(version 5) while the slot is half moved').not.toMatchObject({ answered: { l2: 'written' } })

        const finished = await settle(admin.finishMigration(slot, source, target))
        expect.soft(finished, 'the rest of the slot does not MIGRATE to T').toEqual({ answered: undefined })

        // A fresh process reads the id: L2 must answer the newer row (the loader is the fallback only).
        const reader = createTable<string>({ name, ttl: 600_000, l2: await storeOf(driver, prefix, 10_000) })
        undo.push(() => reader.close())
        const fetched = await settle(reader.fetch(id, () => 'loaded'))
        expect.soft(fetched, 'fetch after the reshard').toEqual({ answered: 'newer' })
      }, 60_000)
    })
  }
})
