import type { Clock, TimerHandle } from '../core/clock.js'

/** Something with a deadline that may end before it. */
export interface Expiring {
  /** When it times out, on the clock. */
  readonly deadline: number
  /** False once it ended on its own; an ended entry is skipped and dropped. */
  readonly running: boolean
}

/**
 * The bound of every flight of a table (`loadTimeout`, with a lease's wait: `env.flightBound`), on one clock timer. Every flight gets the same
 * bound, so deadlines are ordered by start: a FIFO queue whose head is always the next deadline.
 * Flights that end early are dropped lazily from the head, and the queue is filtered when ended
 * entries outnumber running ones, so it holds at most about twice the running flights (+ 1024).
 *
 * Written only by the owner; the timer callback only asks the owner to expire what is due.
 */
export class Deadlines<T extends Expiring> {
  /** The items in deadline order; the cells before `#head` are emptied as it passes them, so an ended item is garbage at once. */
  #queue: (T | undefined)[] = []
  #head = 0
  /** Entries still queued whose item has ended. */
  #stale = 0
  /** The timer for the head's deadline, while there is a head. */
  #timer: TimerHandle | undefined = undefined

  constructor(
    private readonly clock: Clock,
    /** Called (by the timer) when a deadline may have passed; the owner then calls {@link expire}. */
    private readonly due: () => void,
  ) {}

  /** Queues `item`, whose deadline is no earlier than any queued one's. */
  add(item: T): void {
    this.#queue.push(item)
    if (this.#timer === undefined) this.#arm(item.deadline)
  }

  /** Removes and returns every running item whose deadline has passed; re-arms for the next one. */
  expire(): T[] {
    const now = this.clock.now()
    const expired: T[] = []
    const queue = this.#queue
    while (this.#head < queue.length) {
      const item = queue[this.#head]!
      if (item.running && item.deadline > now) break
      if (item.running) expired.push(item)
      else this.#stale--
      queue[this.#head++] = undefined
    }
    this.#compact()
    this.#timer = undefined
    if (this.#head < this.#queue.length) this.#arm(this.#queue[this.#head]!.deadline)
    return expired
  }

  /** Called once for each item that ends before its deadline (never for one returned by {@link expire}). */
  ended(): void {
    this.#stale++
    const queue = this.#queue
    while (this.#head < queue.length && !queue[this.#head]!.running) {
      queue[this.#head++] = undefined
      this.#stale--
    }
    this.#compact()
    if (this.#head === this.#queue.length) this.stop()
  }

  /** Cancels the timer. */
  stop(): void {
    if (this.#timer !== undefined) this.clock.clearTimeout(this.#timer)
    this.#timer = undefined
  }

  /** Sets the timer for `at` (called only while none is set). */
  #arm(at: number): void {
    this.#timer = this.clock.setTimeout(this.due, Math.max(0, at - this.clock.now()))
  }

  #compact(): void {
    const queue = this.#queue
    if (this.#head === queue.length) {
      this.#queue = []
      this.#head = this.#stale = 0
    } else if (this.#stale > 1024 && this.#stale * 2 > queue.length - this.#head) {
      this.#queue = queue.slice(this.#head).filter((item) => item!.running)
      this.#head = this.#stale = 0
    } else if (this.#head > 1024 && this.#head * 2 > queue.length) {
      this.#queue = queue.slice(this.#head)
      this.#head = 0
    }
  }
}
