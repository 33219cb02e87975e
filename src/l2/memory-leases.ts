import type { Clock } from '../core/clock.js'
import { badArgument, badNumber, describe } from '../core/errors.js'
import type { Id } from '../core/id.js'
import { leaseKey } from './keys.js'
import { MAX_VERSION, isVersion } from '../core/versions.js'
import type { L2Entry, L2Leases, L2Write, LeaseRead } from './store.js'

interface Lease {
  token: string
  expiresAt: number
}

/**
 * `memoryL2`'s leases: one token per (table, id), expiring after its `ttl` on the store's clock, as
 * a Redis key with `PX` does. An expired lease is dropped when a call meets it, or by {@link sweep}.
 * Written only through its methods.
 */
export class MemoryLeases implements L2Leases {
  readonly #held = new Map<string, Lease>()

  constructor(
    private readonly clock: Clock,
    /** Throws once the store is closed. */
    private readonly open: (op: string) => void,
    /** Called after each lease taken: the store's sweep schedule counts it as a write. */
    private readonly wrote: (now: number) => void,
    /** The store's read of (table, id) at `now`, as `get` answers it. */
    private readonly read: (table: string, id: Id, now: number) => L2Entry | undefined,
    /** The store's `set`. */
    private readonly write: (table: string, id: Id, entry: L2Write) => Promise<boolean>,
  ) {}

  /** Leases held now, expired ones not yet dropped included. */
  get size(): number {
    return this.#held.size
  }

  async acquire(table: string, id: Id, token: string, ttl: number): Promise<boolean> {
    this.open('leases.acquire')
    checkLease('acquire', token, ttl)
    return this.#take(leaseKey('', table, id), token, ttl, this.clock.now())
  }

  async acquireMany(table: string, ids: readonly Id[], token: string, ttl: number): Promise<boolean[]> {
    this.open('leases.acquireMany')
    checkLease('acquireMany', token, ttl)
    if (!Array.isArray(ids)) throw badArgument(TypeError, `memoryL2.leases.acquireMany: ids must be an array, got ${describe(ids)}`)
    const keys = ids.map((id) => leaseKey('', table, id)) // every id checked before any lease is taken
    const now = this.clock.now()
    return keys.map((key) => this.#take(key, token, ttl, now))
  }

  async readOrAcquire(table: string, id: Id, token: string, ttl: number, floor: number): Promise<LeaseRead> {
    this.open('leases.readOrAcquire')
    checkLease('readOrAcquire', token, ttl)
    if (!isVersion(floor)) throw badNumber(floor, `memoryL2.leases.readOrAcquire: floor must be an integer in [0, ${MAX_VERSION}], got ${describe(floor)}`)
    const key = leaseKey('', table, id)
    const now = this.clock.now()
    const entry = this.read(table, id, now)
    const fill = entry !== undefined && entry.kind !== 'tombstone' && entry.version >= floor && entry.ttl > 0
    if (fill) return { entry, lease: 'unasked' }
    return { entry, lease: this.#take(key, token, ttl, now) ? 'taken' : 'busy' }
  }

  async setAndRelease(table: string, id: Id, entry: L2Write, token: string): Promise<boolean> {
    this.open('leases.setAndRelease')
    if (typeof token !== 'string' || token === '') throw badArgument(TypeError, `memoryL2.leases.setAndRelease: token must be a non-empty string, got ${describe(token)}`)
    const written = await this.write(table, id, entry)
    if (written) await this.void(table, id)
    else await this.release(table, id, token)
    return written
  }

  async holder(table: string, id: Id): Promise<string | undefined> {
    this.open('leases.holder')
    return this.#live(leaseKey('', table, id), this.clock.now())?.token
  }

  async release(table: string, id: Id, token: string): Promise<boolean> {
    this.open('leases.release')
    const key = leaseKey('', table, id)
    if (this.#live(key, this.clock.now())?.token !== token) return false
    this.#held.delete(key)
    return true
  }

  async void(table: string, id: Id): Promise<void> {
    this.open('leases.void')
    this.#held.delete(leaseKey('', table, id))
  }

  /** Drops every lease expired at `now`. */
  sweep(now: number): void {
    for (const [key, lease] of this.#held) if (lease.expiresAt <= now) this.#held.delete(key)
  }

  /** Drops every lease (the store closed). */
  clear(): void {
    this.#held.clear()
  }

  /** Takes the lease under `key` unless a live one holds it: true when taken. */
  #take(key: string, token: string, ttl: number, now: number): boolean {
    if (this.#live(key, now) !== undefined) return false
    this.#held.set(key, { token, expiresAt: now + ttl })
    this.wrote(now)
    return true
  }

  #live(key: string, now: number): Lease | undefined {
    const lease = this.#held.get(key)
    if (lease === undefined || lease.expiresAt > now) return lease
    this.#held.delete(key)
    return undefined
  }
}

/** Refuses an empty token or a ttl that is not an integer ≥ 1, naming the call. */
function checkLease(call: string, token: unknown, ttl: number): void {
  if (typeof token !== 'string' || token === '') throw badArgument(TypeError, `memoryL2.leases.${call}: token must be a non-empty string, got ${describe(token)}`)
  if (!(Number.isSafeInteger(ttl) && ttl >= 1)) throw badNumber(ttl, `memoryL2.leases.${call}: ttl must be an integer ≥ 1, got ${describe(ttl)}`)
}
