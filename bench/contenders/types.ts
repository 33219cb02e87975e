import type { WorkloadId } from '../lib/config.js'

/**
 * The one interface every contender implements: a read-through cache built from a loader, read
 * with `fetch`, and closed with `close`. Floors, peers and EchoStore all fit behind it, so every
 * workload drives them with the same code.
 */

/** What a loader returns and the caches hold. The bench uses one shared object for every row. */
export type Row = object

/** Fills a missing id. Some workloads latch it, count it or time-stamp its calls. */
export type Loader = (id: string) => Row | Promise<Row>

/** A clock in the shape EchoStore accepts; W7 freezes and skews one to line expiries up. */
export interface BenchClock {
  now(): number
  setTimeout(fn: () => void, ms: number): unknown
  clearTimeout(handle: unknown): void
}

/** How a workload asks for a cache. Contenders ignore what they have no knob for. */
export interface CacheOptions {
  /** Row lifetime in ms. */
  ttl: number
  /** Most rows held. */
  capacity: number
  /** The loader behind every miss. */
  loader: Loader
  /** Expiry jitter (only EchoStore has it; others ignore it). */
  jitter?: number
  /** Seeded source for jitter (EchoStore only). */
  random?: () => number
  /** The table's clock (EchoStore only; W7). */
  clock?: BenchClock
  /** Sweeper tick in ms (EchoStore only). */
  sweepInterval?: number
}

/** One cache built by a contender. */
export interface CacheInstance {
  /** Read-through read: a row, or the loader's answer on a miss. */
  fetch(id: string): Promise<Row | undefined>
  /** Releases timers and stores. */
  close(): Promise<void>
  /** Rows reclaimed so far by a background sweeper, where the contender has one. */
  swept?(): number
  /** Rows held now, where the contender can tell. */
  size?(): number
  /** One synchronous pass that drops expired rows, where the contender has a method for it. */
  purge?(): void
  /** Writes rows without the loader, as fast as the contender allows (only to set up W7). */
  prefill?(ids: readonly string[], row: Row): Promise<void>
}

/** A contender: a name, what it is, and a factory. */
export interface Contender {
  /** Short name used in tables, progress lines and BENCH_ONLY / BENCH_SKIP. */
  name: string
  /** `floor`: written in the bench; `peer`: a published library; `subject`: EchoStore. */
  kind: 'floor' | 'peer' | 'subject'
  /** npm package whose version is reported (none for floors). */
  pkg?: string
  /** Smallest ttl step the contender can express, in ms (async-cache-dedupe: whole seconds). */
  ttlResolutionMs?: number
  /** The workloads it sits out and why, shown in their tables (absent: it runs in every one). */
  sitsOut?: { workloads: readonly WorkloadId[]; why: string }
  /** How the adapter configures the library, for the report. */
  setup: string
  /** What reclaims expired rows in the background, for the W7 report (absent: no sweeper). */
  sweeper?: string
  /** What `purge` calls, for the W7 report (absent: no purge method). */
  purgeMethod?: string
  /** Builds one cache. */
  create(options: CacheOptions): CacheInstance
}
