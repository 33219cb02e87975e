/**
 * The availability service's origin: a deterministic, local availability service for a fictional equipment-rental
 * company. Synthetic tenants, depots and products come from a seed; a summary's numbers come from a
 * hash of (seed, tenant, depot, product), so every run and every machine sees the same data.
 *
 * Every call is counted and logged (tenant, key, start time): the origin's own record of the work
 * the cache did not save. A call answers after `latency` ms of the given clock, so a manual clock
 * holds every call until the test or the simulation lets time pass (a deterministic latch).
 */
import type { Clock } from 'echostore'
import { seeded } from '../support/prng.js'

/** An availability summary: what the read API serves and the cache may reuse for its TTL. */
export interface Availability {
  readonly tenant: string
  readonly depot: string
  readonly sku: string
  readonly product: string
  /** Units in the depot's fleet, units out on rental, units free to book now. */
  readonly fleet: number
  readonly rented: number
  readonly available: number
}

/** One origin call, as the origin saw it. */
export interface OriginCall {
  readonly tenant: string
  readonly key: string
  readonly at: number
}

/** Options of {@link createOrigin}. */
export interface OriginOptions {
  /** Time for the latency; a `manualClock` makes it a latch. */
  clock: Clock
  /** Seed of the synthetic data. Default 2026. */
  seed?: number
  /** How many tenants, depots per tenant, products per depot. Defaults 3, 4, 50. */
  tenants?: number
  depots?: number
  products?: number
  /** Ms of `clock` time per call. Default 20. */
  latency?: number
  /** An outage: calls made from `from` (inclusive) until `until` (exclusive) on the clock fail after `latency`. Default: none. */
  outage?: { from: number; until: number }
}

const COMPANIES = ['acme-hire', 'borealis-plant', 'cobalt-lift', 'dunmore-tools', 'ember-access', 'fjord-rental', 'granite-kit', 'harbour-hire']
const CITIES = ['leeds', 'lyon', 'porto', 'gdansk', 'bremen', 'turin', 'cork', 'ghent', 'malmo', 'brno']
const EQUIPMENT = ['mini-excavator', 'scissor-lift', 'boom-lift', 'telehandler', 'plate-compactor', 'site-dumper', 'generator', 'light-tower', 'concrete-mixer', 'tile-saw']

/** FNV-1a over a string: a stable 32-bit seed per key. */
function hash(text: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193)
  return h >>> 0
}

/** The availability origin. */
export class AvailabilityOrigin {
  /** Tenant ids, e.g. `acme-hire`. */
  readonly tenants: readonly string[]
  /** Depot ids (the same names in every tenant, with different stock). */
  readonly depots: readonly string[]
  /** Product SKUs and their equipment names. */
  readonly products: readonly { readonly sku: string; readonly name: string }[]
  /** Every call so far, in order. */
  readonly log: OriginCall[] = []
  /** Calls started and not yet answered. */
  pending = 0
  /** Calls that failed (made during the outage). */
  failed = 0
  readonly #clock: Clock
  readonly #seed: number
  readonly #latency: number
  readonly #names: Map<string, string>
  readonly #outage: { from: number; until: number } | undefined
  /** Stock movements so far per `tenant|depot`: each one reshuffles what is out on rental there. */
  readonly #movements = new Map<string, number>()

  constructor({ clock, seed = 2026, tenants = 3, depots = 4, products = 50, latency = 20, outage }: OriginOptions) {
    this.#outage = outage
    const random = seeded(seed)
    /** `n` items of `list` in a seeded order (a partial Fisher–Yates shuffle). */
    const pick = <T>(list: readonly T[], n: number): T[] => {
      const items = [...list]
      for (let i = 0; i < n; i++) {
        const j = i + Math.floor(random() * (items.length - i))
        ;[items[i], items[j]] = [items[j]!, items[i]!]
      }
      return items.slice(0, n)
    }
    this.#clock = clock
    this.#seed = seed
    this.#latency = latency
    this.tenants = tenants <= COMPANIES.length ? pick(COMPANIES, tenants) : Array.from({ length: tenants }, (_, i) => `tenant-${i + 1}`)
    this.depots = (depots <= CITIES.length ? pick(CITIES, depots) : Array.from({ length: depots }, (_, i) => `depot-${i + 1}`)).map((city) => `depot-${city}`)
    this.products = Array.from({ length: products }, (_, i) => ({
      sku: `sku-${String(i + 1).padStart(4, '0')}`,
      name: EQUIPMENT[Math.floor(random() * EQUIPMENT.length)]!,
    }))
    this.#names = new Map(this.products.map((product) => [product.sku, product.name]))
  }

  /** Every cache key of one tenant: `<depot>/<sku>`. */
  keys(): string[] {
    return this.depots.flatMap((depot) => this.products.map((product) => `${depot}/${product.sku}`))
  }

  /** Units came back or went out at one depot of `tenant`: every summary of that depot changes. */
  moveStock(tenant: string, depot: string): void {
    const key = `${tenant}|${depot}`
    this.#movements.set(key, (this.#movements.get(key) ?? 0) + 1)
  }

  /** Origin calls so far. */
  get calls(): number {
    return this.log.length
  }

  /** The summary for `key` (`<depot>/<sku>`) of `tenant`, after `latency` ms; `undefined` for an unknown key. During the outage, an error after `latency` ms. */
  availability(tenant: string, key: string): Promise<Availability | undefined> {
    const at = this.#clock.now()
    this.log.push({ tenant, key, at })
    this.pending++
    const down = this.#outage !== undefined && at >= this.#outage.from && at < this.#outage.until
    return new Promise((resolve, reject) => {
      this.#clock.setTimeout(() => {
        this.pending--
        if (!down) return resolve(this.#summary(tenant, key))
        this.failed++
        reject(new Error(`availability service unavailable (outage since ${this.#outage!.from} ms)`))
      }, this.#latency)
    })
  }

  #summary(tenant: string, key: string): Availability | undefined {
    const [depot, sku] = key.split('/')
    const product = sku === undefined ? undefined : this.#names.get(sku)
    if (!this.tenants.includes(tenant) || depot === undefined || !this.depots.includes(depot) || product === undefined) return undefined
    const movements = this.#movements.get(`${tenant}|${depot}`) ?? 0
    const random = seeded(hash(`${this.#seed}|${tenant}|${key}|${movements}`))
    const fleet = 1 + Math.floor(random() * 20)
    const rented = Math.floor(random() * (fleet + 1))
    return { tenant, depot, sku, product, fleet, rented, available: fleet - rented }
  }
}

/** Creates an {@link AvailabilityOrigin}. */
export function createOrigin(options: OriginOptions): AvailabilityOrigin {
  return new AvailabilityOrigin(options)
}
