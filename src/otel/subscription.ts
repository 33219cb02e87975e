import type { TracingChannel } from 'node:diagnostics_channel'

/** What subscribing to the channels returns: the one way to undo it. */
export interface Subscription {
  /** Removes every subscriber and bound store it added. */
  unsubscribe(): void
}

/** The events of a tracing channel a subscriber may handle, each with the operation's context. */
export type TracingHandlers<C> = Partial<Record<'start' | 'end' | 'asyncStart' | 'asyncEnd' | 'error', (context: C) => void>>

/**
 * Subscribes `handlers` to the events of `traced` they name; returns what removes them again. A
 * handler that throws is reported to `onError` and goes no further: a subscriber's throw would
 * otherwise surface as an uncaught exception in whatever the table was doing.
 */
export function subscribeTracing<C extends object>(traced: TracingChannel<unknown, C>, handlers: TracingHandlers<C>, onError: (error: unknown) => void): () => void {
  const added: [keyof TracingHandlers<C>, (message: unknown) => void][] = []
  for (const event of ['start', 'end', 'asyncStart', 'asyncEnd', 'error'] as const) {
    const handler = handlers[event]
    if (handler === undefined) continue
    const listener = (message: unknown): void => {
      try {
        handler(message as C)
      } catch (error) {
        onError(error)
      }
    }
    traced[event].subscribe(listener)
    added.push([event, listener])
  }
  return () => {
    for (const [event, listener] of added) traced[event].unsubscribe(listener)
  }
}
