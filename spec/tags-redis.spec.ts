/**
 * Tags and namespaces on a real Redis, single node and Cluster: two tables with their own
 * `redisL2` and `redisBus` on one prefix and channel stand in for two processes, and a third table
 * on the same L2 without a bus reads only what Redis holds.
 *
 * - A tag invalidation in one process makes the other's tagged rows stale once the bus delivers,
 *   and from the moment it resolves no table reading Redis gets the old entry (counted `tag_stale`).
 * - A namespace's ids never meet the base table's or another namespace's in Redis; a namespace's
 *   `clear()` leaves the others' entries readable; the base table's `clear()` reaches every namespace.
 * - A tagged entry carries its tag keys and birth through Redis, and a tag's version lives under its
 *   own key beside the table's.
 *
 * Every wait on the bus has a deadline (a real server delivers when it does); every key the suite
 * wrote is deleted afterwards.
 */
import { Cluster, Redis } from 'ioredis'
import { afterAll, beforeAll, expect, it, vi } from 'vitest'
import { type Table, createTable } from '../src/index.js'
import { redisBus, redisL2, type RedisBus, type RedisL2 } from '../src/redis.js'
import { tagVersionKey } from '../src/l2/keys.js'
import { ROOT_SCOPE } from '../src/tags/scope.js'
import { cleanPrefix, describeRedis, keysUnder, REDIS_URL, testPrefix } from './support/redis.js'
import { CLUSTER_URLS, describeTopology } from './support/topology.js'

const TABLE = 'availability'
/** Most a message may take to cross the bus before the test fails (a loaded machine included). */
const DELIVERY_MS = 5_000
/** A generous per-call bound: these specs are about what Redis holds, not about its failure policy. */
const SLACK = 1_000

interface Shape {
  name: string
  describe: typeof describeRedis
  url: string | string[]
  admin(): Redis | Cluster
}

const shapes: Shape[] = [
  { name: 'one node', describe: describeRedis, url: REDIS_URL, admin: () => new Redis(REDIS_URL) },
  { name: 'a Cluster', describe: describeTopology, url: CLUSTER_URLS, admin: () => new Cluster([{ host: '127.0.0.1', port: 7100 }], { scaleReads: 'master' }) },
]

for (const shape of shapes) {
  shape.describe(`tags and namespaces on Redis (${shape.name})`, () => {
    const prefix = testPrefix('tags')
    const channel = `${prefix}coherence`
    const opened: { l2: RedisL2; bus?: RedisBus; table: Table<string> }[] = []

    /** A process: a table with its own L2 connection, and its own bus unless `bus` is false. */
    async function process(bus = true): Promise<Table<string>> {
      const l2 = redisL2({ url: shape.url, prefix, timeout: SLACK })
      const coherence = bus ? redisBus({ url: shape.url, channel, namespace: prefix }) : undefined
      if (coherence !== undefined) await coherence.subscribed()
      const table = createTable<string>({ name: TABLE, ttl: 60_000, l2, ...(coherence ? { bus: coherence } : {}) })
      opened.push({ l2, bus: coherence, table })
      return table
    }

    /** A loader that answers `value` with `tags`, counting its calls. */
    function origin(value: string, tags: string[]) {
      const calls: string[] = []
      const loader = (id: string, { setTags }: { setTags(tags: string[]): void }) => {
        calls.push(id)
        setTags(tags)
        return value
      }
      return { loader, calls }
    }

    let admin: Redis | Cluster
    beforeAll(() => {
      admin = shape.admin()
    })
    afterAll(async () => {
      for (const { table, l2, bus } of opened) {
        await table.close()
        await l2.close()
        await bus?.close()
      }
      if (admin instanceof Cluster) await Promise.all(admin.nodes('master').map((node) => cleanPrefix(node, prefix)))
      else await cleanPrefix(admin, prefix)
      admin.disconnect()
    })

    it("a tag invalidation in one process: the other's rows go stale as the bus delivers, and no table reads the old entry from Redis", async () => {
      const [a, b] = [await process(), await process()]
      const stock = origin('3 in stock', ['depot:7'])
      expect(await a.fetch('sku-1', stock.loader)).toBe('3 in stock')
      expect(await b.fetch('sku-1', () => 'not asked')).toBe('3 in stock') // an L2 hit
      expect(b.stats()).toMatchObject({ l2_hits: 1, loads: 0 })

      const result = await a.invalidateTags(['depot:7'])
      expect(result).toMatchObject({ applied: true, l2: 'written', broadcast: true })
      // From Redis alone: a table without a bus, cold, does not get the entry from before.
      const cold = await process(false)
      expect(await cold.fetch('sku-1', origin('1 in stock', ['depot:7']).loader)).toBe('1 in stock')
      expect(cold.stats()).toMatchObject({ l2_hits: 0, loads: 1, tag_stale: 1 })
      // The other process's own row, once the bus delivered.
      await vi.waitFor(() => expect(b.stats().tag_invalidations).toBe(1), { timeout: DELIVERY_MS })
      expect(b.has('sku-1')).toBe(false)
      expect(a.has('sku-1')).toBe(false)
      // The cold table's fill is in Redis now, born after the invalidation: the others read it.
      expect(await b.fetch('sku-1', () => 'not asked')).toBe('1 in stock')
      expect(b.stats().loads).toBe(0)
    })

    it('a tagged entry carries its tags and birth through Redis, and the tag version lives under its own key', async () => {
      const a = await process(false)
      await a.put('sku-2', 'on order', { tags: ['depot:9', 'supplier:2'] })
      const store = redisL2({ url: shape.url, prefix, timeout: SLACK })
      try {
        const entry = await store.get(TABLE, 'sku-2')
        expect(entry).toMatchObject({ kind: 'value', value: 'on order', tags: [ROOT_SCOPE.tagKey('depot:9'), ROOT_SCOPE.tagKey('supplier:2')] })
        expect(entry!.born).toBeGreaterThan(0)
        const { version } = await a.invalidateTags(['supplier:2'])
        expect(await store.tagVersions!(TABLE, [ROOT_SCOPE.tagKey('depot:9'), ROOT_SCOPE.tagKey('supplier:2')])).toEqual([0, version])
        expect(version).toBeGreaterThanOrEqual(entry!.born!)
        const key = tagVersionKey(prefix, TABLE, ROOT_SCOPE.tagKey('supplier:2'))
        expect(await admin.get(key)).toBe(String(version))
        expect(await admin.pttl(key)).toBeGreaterThan(365 * 24 * 60 * 60 * 1000)
      } finally {
        await store.close()
      }
    })

    it("namespaces: ids never meet in Redis; a namespace's clear leaves the others readable; the base clear reaches every namespace", async () => {
      const a = await process()
      const [tenantA, tenantB] = [a.namespace('tenant-a'), a.namespace('tenant-b')]
      await a.put('sku-3', 'base')
      await tenantA.put('sku-3', 'of a')
      await tenantB.put('sku-3', 'of b')
      await tenantA.namespace('eu').put('sku-3', 'of a/eu')

      const reader = await process(false)
      const read = (table: Table<string>) => table.fetch('sku-3', () => 'loaded')
      expect([await read(reader), await read(reader.namespace('tenant-a')), await read(reader.namespace('tenant-b')), await read(reader.namespace('tenant-a').namespace('eu'))]).toEqual([
        'base',
        'of a',
        'of b',
        'of a/eu',
      ])
      expect(reader.stats()).toMatchObject({ l2_hits: 4, loads: 0 })

      expect(await tenantA.clear()).toMatchObject({ l2: 'cleared', broadcast: true })
      const after = await process(false)
      expect([await read(after), await read(after.namespace('tenant-a')), await read(after.namespace('tenant-b')), await read(after.namespace('tenant-a').namespace('eu'))]).toEqual([
        'base',
        'loaded',
        'of b',
        'loaded',
      ])

      expect((await a.clear()).l2).toBe('cleared')
      const last = await process(false)
      expect([await read(last), await read(last.namespace('tenant-b'))]).toEqual(['loaded', 'loaded'])
      // Every key the tables wrote is under the prefix: the namespaces add no key space of their own.
      const keys = admin instanceof Cluster ? (await Promise.all(admin.nodes('master').map((node) => keysUnder(node, prefix)))).flat() : await keysUnder(admin, prefix)
      expect(keys.length).toBeGreaterThan(0)
      expect(keys.every((key) => key.startsWith(prefix))).toBe(true)
    })
  })
}
