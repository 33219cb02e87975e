import type { Emitter } from 'mitt'
import type { Bus, CoherenceMessage } from './bus.js'
import { busEvent } from '../core/channels.js'
import { type Clock, inBackground } from '../core/clock.js'
import type { OwnerCounterName } from '../core/counters.js'
import { type TableEvents, emitSafely } from '../core/events.js'
import type { Id } from '../core/id.js'

/** Bound in ms (on the table's clock) on publishing one message to the bus; past it `bus_errors` counts it. */
export const PUBLISH_TIMEOUT = 1_000

/** What a table publishes with: its bus, clock and events, and a way to count a failure. */
export interface Publisher {
  name: string
  bus: Bus | undefined
  clock: Clock
  events: Emitter<TableEvents>
  /** Counts a failed publish (the owner writes the counter). */
  count(counter: OwnerCounterName): void
  /** The key space of the table's L2 (`L2Store.keySpace`), which every message it publishes carries; `undefined` when it has none. */
  space: string | undefined
  /** The table's announcements: publishes nobody awaits (a lease holder's fill), ended as the owner stops. */
  readonly announcing: Announcements
}

/**
 * A table's announcements in progress, each as the function that ends it. Added to and removed
 * from only by {@link publish}; ended, once and for all, by the owner as it stops ({@link end}), so
 * no timer of a closed table is left and nothing is counted or told after it closed.
 */
export class Announcements {
  readonly #ends = new Set<() => void>()
  #ended = false

  /** True once the owner stopped: a later announcement still goes to the bus, unbounded and uncounted. */
  get ended(): boolean {
    return this.#ended
  }

  /** Adds an announcement in progress, by the function that ends it. */
  add(end: () => void): void {
    this.#ends.add(end)
  }

  /** Removes an announcement that settled. */
  delete(end: () => void): void {
    this.#ends.delete(end)
  }

  /** Ends every announcement in progress, and marks the table's announcements ended. */
  end(): void {
    this.#ended = true
    for (const end of [...this.#ends]) end()
  }
}

/**
 * Publishes `message` (about `id`, or the whole table), stamped with the table's L2 key space, on the table's bus, bounded by
 * {@link PUBLISH_TIMEOUT}; never throws. Resolves true once the bus took it; false without a bus,
 * or when publishing failed or took too long (then counted in `bus_errors`; a failure, not a
 * timeout, is also emitted as an `error` event when someone listens). An `announcement` is one
 * nobody awaits: its bound runs in the background, and ends (false) when the owner stops.
 */
export async function publish(to: Publisher, id: Id | undefined, message: CoherenceMessage, announcement = false): Promise<boolean> {
  const { bus, clock, events, name, space } = to
  if (bus === undefined) return false
  if (space !== undefined) message = { ...message, space }
  if (announcement && to.announcing.ended) return publishUnbounded(bus, message)
  // true once the bus took it, false when it failed or took too long, undefined when the owner
  // ended it (an announcement of a table that closed: neither counted nor told).
  const published = await new Promise<boolean | undefined>((resolve) => {
    let settled = false
    const settle = (ok: boolean | undefined) => {
      settled = true
      to.announcing.delete(end)
      clock.clearTimeout(timer)
      resolve(ok)
    }
    const end = () => settle(undefined)
    const timer = clock.setTimeout(() => settle(false), PUBLISH_TIMEOUT)
    if (announcement) {
      inBackground(timer) // nobody waits on it: it keeps no process alive
      to.announcing.add(end)
    }
    const failed = (error: unknown) => {
      if (settled) return // ended or timed out already: told nothing more
      if (events.all.size > 0) emitSafely(events, 'error', { table: name, id, error })
      settle(false)
    }
    try {
      bus.publish(message).then(() => settle(true), failed)
    } catch (error) {
      failed(error)
    }
  })
  if (published === false) to.count('bus_errors')
  else if (published) busEvent(name, 'published', message)
  return published === true
}

/**
 * An announcement made after its table's owner stopped (a lease holder's write-back that outlived
 * it): other processes' waiters still need it, so it goes to the bus, with no bound, counted
 * nowhere and told to no one.
 */
function publishUnbounded(bus: Bus, message: CoherenceMessage): false {
  try {
    bus.publish(message).then(undefined, () => {})
  } catch {
    // a bus that throws at once: nothing to tell, the table is closed
  }
  return false
}
