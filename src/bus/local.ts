/**
 * The in-process coherence bus: tables in one process that share this object hear each other.
 *
 * Delivery is synchronous: `publish` validates the message, then hands one frozen copy of it to
 * every subscriber, in subscription order, before `publish` returns its (already resolved)
 * promise. A handler that publishes while it runs delivers that nested message at once, to every
 * subscriber, before the outer delivery goes on. A handler that throws does not stop delivery to
 * the others and does not reject `publish`; its error goes to `onHandlerError`, or is dropped.
 */
import { createEmitter } from '../core/events.js'
import { BusClosedError, badArgument, describe } from '../core/errors.js'
import { readOptions } from '../table/read-options.js'
import type { Bus, BusDelivery, CoherenceMessage } from './bus.js'
import { publishable } from './message.js'

/** The in-process bus: a {@link Bus} that also supports `await using`. */
export interface LocalBus extends Bus {
  /** `await using` support: the same as `close()`. */
  [Symbol.asyncDispose](): Promise<void>
}

/** Options of `localBus`. */
export interface LocalBusOptions {
  /** Receives what a subscriber threw, with the delivery it was handling. Default: dropped. */
  onHandlerError?: (error: unknown, delivery: BusDelivery) => void
}

type Events = { delivery: BusDelivery }

/**
 * Creates an in-process bus on mitt. `publish` rejects with a `TypeError` for a malformed message
 * (nothing is delivered) and, after `close()`, with a `BusClosedError` (code `ECHOSTORE_BUS_CLOSED`).
 * After `close()`, `subscribe` returns an unsubscribe that does nothing.
 */
export function localBus(options: LocalBusOptions = {}): LocalBus {
  const { onHandlerError } = readOptions(options, ['onHandlerError'], 'localBus') as LocalBusOptions
  if (onHandlerError !== undefined && typeof onHandlerError !== 'function') {
    throw badArgument(TypeError, `localBus: onHandlerError must be a function, got ${describe(onHandlerError)}`)
  }
  // Written by subscribe, unsubscribe and close; mitt iterates a copy of the list on emit.
  const emitter = createEmitter<Events>()
  let closed = false

  return {
    /** `await using` support: the same as `close()`. */
    [Symbol.asyncDispose](): Promise<void> {
      return this.close()
    },
    async publish(message: CoherenceMessage): Promise<void> {
      if (closed) throw new BusClosedError('localBus', 'publish refused')
      const delivery: BusDelivery = Object.freeze({ type: 'message', message: Object.freeze(publishable('localBus', message)) })
      emitter.emit('delivery', delivery)
    },

    subscribe(handler: (delivery: BusDelivery) => void): () => void {
      if (typeof handler !== 'function') throw badArgument(TypeError, `localBus.subscribe: handler must be a function, got ${typeof handler}`)
      if (closed) return () => {}
      // One wrapper per subscription, so subscribing one function twice means two subscriptions.
      let active = true
      const wrapper = (delivery: BusDelivery): void => {
        // An unsubscribe or close made by an earlier handler of this delivery takes effect at once.
        if (!active || closed) return
        try {
          handler(delivery)
        } catch (error) {
          reportHandlerError(onHandlerError, error, delivery)
        }
      }
      emitter.on('delivery', wrapper)
      return () => {
        if (!active) return
        active = false
        emitter.off('delivery', wrapper)
      }
    },

    async close(): Promise<void> {
      closed = true
      emitter.all.clear()
    },
  }
}

function reportHandlerError(onHandlerError: LocalBusOptions['onHandlerError'], error: unknown, delivery: BusDelivery): void {
  if (onHandlerError === undefined) return
  try {
    onHandlerError(error, delivery)
  } catch {
    // The error reporter itself failed; delivery to the other subscribers goes on regardless.
  }
}
