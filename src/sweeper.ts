import type { Clock, TimerHandle } from './clock.js'
import type { Id } from './id.js'
import type { RowStore } from './row-store.js'

/** Most index entries one sweep slice examines; a slice of this size takes well under 5 ms. */
export const SWEEP_SLICE = 16_384

interface Bucket {
  ids: Id[]
  /** How many of `ids` were examined already (a bucket may span several slices). */
  pos: number
}

/**
 * The sweeper: an expiry index plus the tick that drives it. Rows are indexed into buckets of
 * `width` ms by their expiry, so a tick only looks at the buckets that have fully passed, never at
 * the whole map; an expired row is reclaimed within one width and one tick of its expiry. Reclaiming happens in slices of at most {@link SWEEP_SLICE} entries;
 * the owner asks for the next slice through the clock, so the event loop is never held for long.
 *
 * Written only by the owner (`track`, `reclaim`); the timer callbacks only send messages.
 * An entry whose row was replaced or removed is skipped when its bucket comes due; a tombstone is
 * reclaimed only once its own forget time has passed, whichever older entry of its id comes due.
 */
export class Sweeper {
  private readonly buckets = new Map<number, Bucket>()
  private timer: TimerHandle | undefined = undefined
  private continuation: TimerHandle | undefined = undefined
  /** The bucket `track` wrote last (dropped when reclaimed). */
  private lastKey = Number.NaN
  private lastBucket: Bucket | undefined = undefined
  private stopped = false

  constructor(
    private readonly clock: Clock,
    /** Bucket width in ms: `max(sweepInterval, ttl / 16)`, so a table holds about 16–32 buckets. */
    private readonly width: number,
    /** Ms between ticks. */
    private readonly interval: number,
    /** Sends a sweep message to the owner (`first` marks the start of a tick, not a continuation). */
    private readonly requestSweep: (now: number, first: boolean) => void,
  ) {}

  /** Starts ticking every `interval` ms. */
  start(): void {
    this.schedule()
  }

  /** Stops the tick and any pending continuation. Idempotent. */
  stop(): void {
    this.stopped = true
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer)
    if (this.continuation !== undefined) this.clock.clearTimeout(this.continuation)
    this.timer = this.continuation = undefined
  }

  /** Indexes a row written for `id` that expires at `expiresAt`. */
  track(id: Id, expiresAt: number): void {
    const key = Math.floor(expiresAt / this.width)
    if (key === this.lastKey && this.lastBucket !== undefined) {
      this.lastBucket.ids.push(id) // rows written together mostly share a bucket
      return
    }
    let bucket = this.buckets.get(key)
    if (bucket === undefined) this.buckets.set(key, (bucket = { ids: [id], pos: 0 }))
    else bucket.ids.push(id)
    this.lastKey = key
    this.lastBucket = bucket
  }

  /**
   * Removes from `rows` the expired rows indexed in buckets that ended at or before `now`,
   * examining at most `budget` entries. Returns how many rows it removed, and asks for a
   * continuation slice when entries remain.
   */
  reclaim(rows: RowStore<unknown>, now: number, budget = SWEEP_SLICE): number {
    let swept = 0
    let left = budget
    for (const [key, bucket] of this.buckets) {
      if ((key + 1) * this.width > now) continue
      const { ids } = bucket
      const end = Math.min(ids.length, bucket.pos + left)
      for (let i = bucket.pos; i < end; i++) if (rows.reclaim(ids[i]!, now)) swept++
      left -= end - bucket.pos
      bucket.pos = end
      if (end === ids.length) {
        this.buckets.delete(key)
        if (bucket === this.lastBucket) this.lastBucket = undefined
      }
      if (left === 0) {
        this.continueAt(now)
        break
      }
    }
    return swept
  }

  /** Index entries held (live or stale); for tests and memory accounting. */
  indexed(): number {
    let n = 0
    for (const bucket of this.buckets.values()) n += bucket.ids.length - bucket.pos
    return n
  }

  private schedule(): void {
    if (this.stopped) return
    this.timer = this.clock.setTimeout(() => {
      this.schedule()
      this.requestSweep(this.clock.now(), true)
    }, this.interval)
  }

  private continueAt(now: number): void {
    if (this.stopped || this.continuation !== undefined) return
    this.continuation = this.clock.setTimeout(() => {
      this.continuation = undefined
      this.requestSweep(now, false)
    }, 0)
  }
}
