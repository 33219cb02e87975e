/**
 * The availability service's read API: availability summaries read through EchoStore, one table per tenant
 * (`availability:<tenant>`), so tenants never share a row, a flight or an L2 key.
 *
 * Coalescing is process-local: one reader (one process) turns a herd on one key into one origin
 * call, but two readers (two instances of the service) each make their own call. A shared L2 (Redis)
 * does not coordinate their flights; it lets an instance that starts cold, or a row that expired in
 * one instance, be answered from what another instance already loaded.
 *
 * Each summary is tagged with its depot (`setTags([depot])` in the loader), so when a depot's stock
 * moves, {@link AvailabilityReader.stockMoved} makes every summary of that depot stale with one
 * `invalidateTags` call, whatever the number of products, and the others keep their rows.
 */
import { randomBytes } from 'node:crypto'
import { Redis } from 'ioredis'
import { type ChangeResult, type Clock, type FetchOptions, type LoaderContext, type Stats, type Table, COUNTER_NAMES, createTable, memoryL2 } from 'echostore'
import type { L2Store } from 'echostore/store'
import { redisL2 } from 'echostore/redis'
import { deleteKeys } from '../support/redis.js'
import type { Availability, AvailabilityOrigin } from './origin.js'

/** Options of {@link createReader}. */
export interface ReaderOptions {
  origin: AvailabilityOrigin
  /** Default: the system clock. */
  clock?: Clock
  /** Row lifetime in ms. Default 1000. */
  ttl?: number
  /** Expiry jitter. Default 0.2. */
  jitter?: number
  /** Rows per tenant table. Default 10_000. */
  capacity?: number
  /** The single-flight gate. Default `true`. */
  coalesce?: boolean
  /** Jitter source. Default `Math.random`. */
  random?: () => number
  /** A shared L2 (see {@link chooseL2}). Default: none. */
  l2?: L2Store
  /** Ms a summary is kept past its expiry, to answer with while the origin fails (the fail-safe). Default 0: none. */
  grace?: number
  /** Ms the fail-safe leaves the origin alone after a failure it absorbed. Default: the table's (min(ttl, 5 s)). */
  graceBackoff?: number
}

/** The settings a reader runs with, as recorded in a report. */
export interface ReaderSettings {
  ttl: number
  jitter: number
  capacity: number
  coalesce: boolean
  negativeTtl: number
  grace: number
}

/** Availability reads through one EchoStore table per tenant. */
export class AvailabilityReader {
  /** The settings, for reports. */
  readonly settings: ReaderSettings
  readonly #origin: AvailabilityOrigin
  readonly #tables = new Map<string, Table<Availability | undefined>>()
  readonly #loaders = new Map<string, (key: string, context: LoaderContext) => Promise<Availability | undefined>>()
  /** The longest time past its expiry of a summary answered from grace, in ms (0 until one is). */
  longestStaleness = 0

  constructor({ origin, clock, ttl = 1_000, jitter = 0.2, capacity = 10_000, coalesce = true, random, l2, grace = 0, graceBackoff }: ReaderOptions) {
    this.#origin = origin
    const negativeTtl = Math.min(ttl, 5_000)
    this.settings = { ttl, jitter, capacity, coalesce, negativeTtl, grace }
    for (const tenant of origin.tenants) {
      const table = createTable<Availability | undefined>({
        name: `availability:${tenant}`,
        ttl,
        jitter,
        capacity,
        coalesce,
        negativeTtl,
        grace,
        ...(graceBackoff !== undefined && { graceBackoff }),
        ...(clock && { clock }),
        ...(random && { random }),
        ...(l2 && { l2 }),
      })
      table.events.on('stale', ({ staleness }) => (this.longestStaleness = Math.max(this.longestStaleness, staleness)))
      table.events.on('error', () => {}) // the fail-safe reports each failure it absorbs; the report counts them through stats
      this.#tables.set(tenant, table)
      this.#loaders.set(tenant, (key, { setTags }) => {
        setTags([key.slice(0, key.indexOf('/'))]) // the depot: `<depot>/<sku>`
        return origin.availability(tenant, key)
      })
    }
  }

  /** The availability of `sku` at `depot` for `tenant`; `undefined` when the origin has no such product. */
  read(tenant: string, depot: string, sku: string, options?: FetchOptions): Promise<Availability | undefined> {
    return this.readKey(tenant, `${depot}/${sku}`, options)
  }

  /** The same, by cache key `<depot>/<sku>`. */
  readKey(tenant: string, key: string, options?: FetchOptions): Promise<Availability | undefined> {
    const table = this.#tables.get(tenant)
    if (table === undefined) return Promise.reject(new RangeError(`unknown tenant ${JSON.stringify(tenant)} (known: ${this.#origin.tenants.join(', ')})`))
    return table.fetch(key, this.#loaders.get(tenant)!, options)
  }

  /** A depot's stock moved: every summary of `depot` for `tenant` is stale from now on (one tag invalidation). */
  stockMoved(tenant: string, depot: string): Promise<ChangeResult> {
    const table = this.#tables.get(tenant)
    if (table === undefined) return Promise.reject(new RangeError(`unknown tenant ${JSON.stringify(tenant)} (known: ${this.#origin.tenants.join(', ')})`))
    return table.invalidateTags([depot])
  }

  /** Each tenant's table stats. */
  statsByTenant(): Record<string, Stats> {
    return Object.fromEntries([...this.#tables].map(([tenant, table]) => [tenant, table.stats()]))
  }

  /** The stats of every tenant table, summed (`hit_rate` recomputed). */
  stats(): Stats {
    const total: Record<string, number> = Object.fromEntries([...COUNTER_NAMES, 'size', 'inflight'].map((key) => [key, 0]))
    for (const stats of Object.values(this.statsByTenant())) for (const key of Object.keys(total)) total[key]! += stats[key as keyof Stats]
    const reads = total.hits! + total.misses!
    return Object.freeze({ ...total, hit_rate: reads === 0 ? 0 : total.hits! / reads }) as Stats
  }

  /** The coalescing gate of every tenant table, at run time. */
  setCoalescing(on: boolean): void {
    for (const table of this.#tables.values()) table.setCoalescing(on)
  }

  /** Closes every tenant table. */
  async close(): Promise<void> {
    await Promise.all([...this.#tables.values()].map((table) => table.close()))
  }
}

/** Creates an {@link AvailabilityReader}. */
export function createReader(options: ReaderOptions): AvailabilityReader {
  return new AvailabilityReader(options)
}

/** The L2 a reader runs with, and why. */
export interface L2Choice {
  kind: 'redis' | 'memory'
  store: L2Store
  /** One line saying which store and why. */
  why: string
  /** Closes the store (and, for Redis, deletes this run's keys). */
  close(): Promise<void>
}

/**
 * Redis when `REDIS_URL` is set or a server answers on 127.0.0.1:6379, else `memoryL2` (on `clock`).
 * Redis keys go under a fresh prefix per call, deleted again by `close()`.
 */
export async function chooseL2({ clock }: { clock?: Clock } = {}): Promise<L2Choice> {
  const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 1_000, retryStrategy: () => null })
  client.on('error', () => {})
  let reachable = false
  try {
    await client.connect()
    reachable = (await client.ping()) === 'PONG'
  } catch {
    reachable = false
  }
  if (!reachable) {
    client.disconnect()
    const why = `memoryL2 (in-process): no Redis answered at ${url}${process.env.REDIS_URL ? ' (REDIS_URL)' : ''}`
    const store = memoryL2(clock ? { clock } : {})
    return { kind: 'memory', store, why, close: () => store.close() }
  }
  const prefix = `echostore-example:rental:${randomBytes(4).toString('hex')}:`
  const store = redisL2({ client, prefix })
  return {
    kind: 'redis',
    store,
    why: `redisL2 at ${url}${process.env.REDIS_URL ? ' (REDIS_URL)' : ' (reachable on the default address)'}, keys under ${prefix}`,
    async close() {
      await store.close()
      await deleteKeys(client, prefix)
      await client.quit()
    },
  }
}
