/**
 * The interface W12 drives: a cache in front of the day's origin, read by id, told of stock
 * updates through its own invalidation call, and closed at the end of the day. Each contender's
 * adapter builds it the way that library's documentation recommends for grace, stale serving and
 * timeouts, and says so in `setup`.
 */

/** What the origin answers: the row's version and when the origin read it (epoch ms); `missing` for an id it does not have. */
export interface StockRow {
  id: string
  version: number
  loadedAt: number
  missing?: true
}

/** Where the four-instance shape keeps its shared state: one Redis, a key prefix and a bus channel per run. */
export interface SharedRedis {
  url: string
  prefix: string
}

/** What an adapter gets to build its cache. */
export interface DaySetup {
  /** Row lifetime, ms. */
  ttl: number
  /** How long past its ttl a row may still be served when the contender has a grace or stale window, ms. */
  grace: number
  /** The one deadline every contender that has one gets for a load, ms. */
  loadDeadline: number
  /** Most rows held in memory. */
  capacity: number
  /** Calls the origin (over IPC to the parent); rejects while the origin is down. */
  load: (id: string) => Promise<StockRow>
  /** Set in the four-instance shape. */
  redis?: SharedRedis
}

/** One instance's cache. */
export interface DayCache {
  read(id: string): Promise<StockRow | undefined>
  /** Called after the origin changed the row: the library's own invalidation. */
  invalidate(id: string): Promise<unknown>
  close(): Promise<void>
  /** The library's own counters at the end of the day, where it keeps any (reported as they are). */
  counters?(): Record<string, number>
}

/** A W12 contender: its name (as in the bench's registry), how it is set up in each shape, and a factory. */
export interface DayContender {
  name: string
  /** The setup, exactly, for the notes column: `shared` is the four-instance shape. */
  setup(shared: boolean): string
  create(setup: DaySetup): Promise<DayCache>
}
