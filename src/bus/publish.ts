import type { Emitter } from 'mitt'
import type { Bus, CoherenceMessage } from './bus.js'
import { busEvent } from '../core/channels.js'
import type { Clock } from '../core/clock.js'
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
}

/**
 * Publishes `message` (about `id`, or the whole table), stamped with the table's L2 key space, on the table's bus, bounded by
 * {@link PUBLISH_TIMEOUT}; never throws. Resolves true once the bus took it; false without a bus,
 * or when publishing failed or took too long (then counted in `bus_errors`; a failure, not a
 * timeout, is also emitted as an `error` event when someone listens).
 */
export async function publish(to: Publisher, id: Id | undefined, message: CoherenceMessage): Promise<boolean> {
  const { bus, clock, events, name, space } = to
  if (bus === undefined) return false
  if (space !== undefined) message = { ...message, space }
  const published = await new Promise<boolean>((resolve) => {
    const timer = clock.setTimeout(() => resolve(false), PUBLISH_TIMEOUT)
    const done = (ok: boolean, error?: unknown) => {
      clock.clearTimeout(timer)
      if (!ok && events.all.size > 0) emitSafely(events, 'error', { table: name, id, error })
      resolve(ok)
    }
    try {
      bus.publish(message).then(
        () => done(true),
        (error: unknown) => done(false, error),
      )
    } catch (error) {
      done(false, error)
    }
  })
  if (!published) to.count('bus_errors')
  else busEvent(name, 'published', message)
  return published
}
