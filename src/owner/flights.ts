import type { Clock, TimerHandle } from '../core/clock.js'
import type { Id } from '../core/id.js'
import type { Flight, HolderEnd } from '../flight/flight.js'
import type { Scope } from '../tags/scope.js'
import { RENEW_EVERY } from '../core/young-collections.js'

/**
 * The registry of a table's running flights, as Go's singleflight `Group` owns its map: the only
 * code that touches the joinable flights (one per id, started with the coalescing gate on, not
 * fenced), the solo flights (started with the gate off), their deadlines and their fences. The
 * owner's handlers start, join, fence, release and wake flights through it; the mailbox only reads
 * {@link joinable}. Written only by the owner's transition (the deadline timer only asks the owner
 * to {@link expire}).
 *
 * A flight settles only what it still owns: {@link release} ends it once (`running` false), removes
 * the map entry only while that entry is this flight, and a result that arrives afterwards is
 * dropped by the owner ({@link owns}).
 */
export class Flights<V> {
  /** Joinable flights by id. Replaced by a copy every `RENEW_EVERY` starts (see `core/young-collections.ts`). */
  #joinable = new Map<Id, Flight<V>>()
  /** Running flights that are not joinable; fenced by id like the others. Renewed with {@link #joinable}. */
  #solo = new Set<Flight<V>>()
  /** Flights started until the maps are next renewed. */
  #untilRenew = RENEW_EVERY
  /** Every flight's bound, on one timer. */
  readonly #deadlines: Deadlines<Flight<V>>
  readonly #clock: Clock
  /** How many flights run now, joinable or not. */
  #running = 0
  /** Flights a change fenced this turn while they held their id's lease: written by the fences, emptied by {@link endFencedLeases}; the transition reads it (no call on a turn with none). */
  fencedHolders: Flight<V>[] | undefined = undefined

  constructor(clock: Clock, deadlineDue: () => void) {
    this.#clock = clock
    this.#deadlines = new Deadlines<Flight<V>>(clock, deadlineDue)
  }

  /** How many flights run now, joinable or not. */
  get running(): number {
    return this.#running
  }

  /** The id's joinable flight, if one runs. */
  joinable(id: Id): Flight<V> | undefined {
    return this.#joinable.get(id)
  }

  /** True when a flight of `id` runs, joinable or not. */
  has(id: Id): boolean {
    if (this.#joinable.has(id)) return true
    for (const solo of this.#solo) if (solo.id === id) return true
    return false
  }

  /** The version the id's joinable flight started from; -1 when none runs. */
  versionOf(id: Id): number {
    return this.#joinable.get(id)?.version ?? -1
  }

  /** Registers a new flight: joinable when it was started so, and bounded by its deadline. */
  start(flight: Flight<V>): void {
    if (--this.#untilRenew === 0) this.#renew()
    if (flight.forced) this.#supersede(flight)
    if (flight.joinable) this.#joinable.set(flight.id, flight)
    else this.#solo.add(flight)
    this.#running++
    this.#deadlines.add(flight)
  }

  /** True while `flight` still runs: only then may its result settle anything. */
  owns(flight: Flight<V>): boolean {
    return flight.running
  }

  /**
   * Ends `flight`: it no longer runs, its soft timer goes, and its map entry (if still its own) goes.
   * A flight waiting on another process's lease stops waiting, as an effect (`defer`). `early`: it
   * ended before its deadline (not by {@link expire}).
   */
  release(flight: Flight<V>, defer: (effect: () => void) => void, early = true): void {
    flight.running = false
    if (flight.softTimer !== undefined) this.#clock.clearTimeout(flight.softTimer)
    const leaseWake = flight.leaseWake
    if (leaseWake !== undefined) defer(() => leaseWake())
    if (early) this.#deadlines.ended()
    // While a joinable flight runs unfenced its map entry is its own (no other flight of its id
    // starts joinable, and every fence takes the entry of the flight it fences): no read needed. A
    // fenced one may be in the solo set (a superseded flight is kept there).
    if (flight.joinable && !flight.fenced) this.#joinable.delete(flight.id)
    else this.#solo.delete(flight)
    this.#running--
  }

  /** Every running flight whose bound has passed, released (the caller answers them). */
  expire(defer: (effect: () => void) => void): Flight<V>[] {
    const expired = this.#deadlines.expire()
    for (const flight of expired) this.release(flight, defer, false)
    return expired
  }

  /**
   * The forced refresh `by` is starting: it supersedes its id's flights in progress (the joinable
   * one and the solo ones of coalescing off). Each still answers its callers, but is no longer
   * joinable and its answer is not stored; as no change made it stale, it keeps its graced fallback
   * (`Flight.supersededBy`), and stays in the solo set so a later fence of a change reaches it.
   */
  #supersede(by: Flight<V>): void {
    const { id } = by
    const flight = this.#joinable.get(id)
    if (flight !== undefined) {
      this.#joinable.delete(id)
      this.#solo.add(flight)
    }
    for (const solo of this.#solo) {
      if (solo.id !== id || solo.fenced) continue
      solo.fenced = true
      solo.supersededBy = by
    }
  }

  /**
   * The forced refresh `abandoned` was released before it answered (every caller left by
   * cancellation): the flights it superseded that nothing fenced since are as they were, their
   * answers stored, the joinable one joinable again (while no other flight of the id is). Nothing is
   * restored when it was itself superseded by a newer refresh or fenced by a change: those stand.
   */
  restoreSuperseded(abandoned: Flight<V>): void {
    if (abandoned.fenced) return
    for (const solo of this.#solo) {
      if (solo.supersededBy !== abandoned) continue
      if (solo.joinable) {
        if (this.#joinable.has(solo.id)) continue // another took its place: it stays superseded
        this.#solo.delete(solo)
        this.#joinable.set(solo.id, solo)
      }
      solo.fenced = false
      solo.supersededBy = undefined
    }
  }

  /** Fences the flights of `id` that started from a version no newer than `version` (a change of the id at `version`). */
  fenceId(id: Id, version: number): void {
    const flight = this.#joinable.get(id)
    if (flight !== undefined && flight.version <= version) this.#fence(flight)
    for (const solo of this.#solo) if (solo.id === id && solo.version <= version) this.#fenceForChange(solo)
  }

  /** Fences every flight of an id `scope` holds (tags of the scope invalidated). */
  fenceScope(scope: Scope): void {
    for (const [id, flight] of this.#joinable) if (scope.holds(id)) this.#fence(flight)
    for (const flight of this.#solo) if (scope.holds(flight.id)) this.#fenceForChange(flight)
  }

  /** Fences every flight (a clear, a bus gap). */
  fenceAll(): void {
    for (const flight of this.#joinable.values()) this.#fenceForChange(flight)
    for (const flight of this.#solo) this.#fenceForChange(flight)
    this.#joinable.clear()
  }

  /**
   * Ends, as effects after the turn (`defer`), the leases of the flights a change fenced this turn
   * while they held their id's lease (`Flight.leaseHeld`): their answers will fill nothing.
   */
  endFencedLeases(defer: (effect: () => void) => void): void {
    const holders = this.fencedHolders
    if (holders === undefined) return
    this.fencedHolders = undefined
    for (const flight of holders) {
      const end = flight.leaseHeld
      if (end !== undefined) defer(end)
    }
  }

  /** Fences the joinable `flight` for a change: no longer joinable, its answer not stored. */
  #fence(flight: Flight<V>): void {
    this.#fenceForChange(flight)
    this.#joinable.delete(flight.id)
  }

  /** Marks `flight` fenced by a change (an id's, a scope's, a clear's): its answer is not stored, and no graced value answers its callers (a superseded flight's no longer either); a lease it holds is to end. */
  #fenceForChange(flight: Flight<V>): void {
    flight.fenced = true
    flight.supersededBy = undefined
    if (flight.leaseHeld !== undefined) (this.fencedHolders ??= []).push(flight)
  }

  /**
   * Wakes the flights of `id` (every flight, when `id` is undefined) that wait on another process's
   * lease, as an effect (`defer`): a fill or a change arrived, so they look at L2 now; `ended` says
   * how the holder ended without a fill, when it did.
   */
  wake(id: Id | undefined, defer: (effect: () => void) => void, ended?: HolderEnd): void {
    const waking: ((ended?: HolderEnd) => void)[] = []
    const add = (flight: Flight<V>) => flight.leaseWake !== undefined && waking.push(flight.leaseWake)
    if (id === undefined) for (const flight of this.#joinable.values()) add(flight)
    else {
      const flight = this.#joinable.get(id)
      if (flight !== undefined) add(flight)
    }
    for (const flight of this.#solo) if (id === undefined || flight.id === id) add(flight)
    if (waking.length > 0) defer(() => waking.forEach((leaseWake) => leaseWake(ended)))
  }

  /** The earliest birth (on the tag version clock) of a running flight whose answer may be stored (not fenced), or `below` when it is earlier. */
  oldestBorn(below: number): number {
    let oldest = below
    for (const flight of this.#joinable.values()) if (flight.born < oldest) oldest = flight.born
    for (const flight of this.#solo) if (!flight.fenced && flight.born < oldest) oldest = flight.born
    return oldest
  }

  /** Cancels the deadline timer (the owner stopped). */
  stop(): void {
    this.#deadlines.stop()
  }

  /** Moves the running flights to new collections, in the same order (see `core/young-collections.ts`). */
  #renew(): void {
    this.#untilRenew = RENEW_EVERY
    this.#joinable = new Map(this.#joinable)
    this.#solo = new Set(this.#solo)
  }
}

/** Something with a deadline that may end before it. */
interface Expiring {
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
 * Written only by its registry; the timer callback only asks the owner to expire what is due.
 */
class Deadlines<T extends Expiring> {
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
