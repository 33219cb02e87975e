/**
 * A coherence bus whose deliveries a fast-check scheduler times: `publish` queues the message for
 * every subscriber and schedules one delivery per subscriber; each delivery hands that subscriber
 * the oldest message still queued for it. Order per subscriber is kept (as Redis pub/sub keeps it
 * per connection); when each delivery happens, relative to loads, L2 replies and other deliveries,
 * is the scheduler's choice. It keeps the `Bus` contract, and validates what it is given.
 */
import type fc from 'fast-check'
import { type Bus, type BusDelivery, type CoherenceMessage, parseCoherenceMessage } from '../../src/store.js'

interface Subscriber {
  handler: (delivery: BusDelivery) => void
  queue: CoherenceMessage[]
  active: boolean
}

/** A scheduled bus; `delivered(index, message)` is called after subscriber `index` (in subscription order) handled a message. */
export function scheduledBus(scheduler: fc.Scheduler, delivered: (index: number, message: CoherenceMessage) => void = () => {}): Bus {
  const subscribers: Subscriber[] = []
  let closed = false
  return {
    async publish(message) {
      if (closed) throw new Error('scheduled bus: closed')
      const parsed = parseCoherenceMessage(message)
      if (!parsed.ok) throw new TypeError(`scheduled bus: invalid message: ${parsed.reason}`)
      subscribers.forEach((subscriber, index) => {
        if (!subscriber.active) return
        subscriber.queue.push(parsed.message)
        void scheduler.schedule(Promise.resolve(), `bus → ${index}`).then(() => {
          const next = subscriber.queue.shift()
          if (next === undefined || !subscriber.active) return
          subscriber.handler({ type: 'message', message: next })
          delivered(index, next)
        })
      })
    },
    subscribe(handler) {
      const subscriber: Subscriber = { handler, queue: [], active: true }
      subscribers.push(subscriber)
      return () => {
        subscriber.active = false
        subscriber.queue.length = 0
      }
    },
    async close() {
      closed = true
    },
  }
}
