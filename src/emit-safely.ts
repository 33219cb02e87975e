import type { Emitter, EventType, Handler, WildcardHandler } from 'mitt'

/**
 * Emits `event` to every listener of `type` (then to `'*'` listeners), each in its own try/catch:
 * a listener that throws is reported as a process warning and never reaches the table (a throw in
 * the owner's effects would stop its actor, leaving every later fetch pending). Builds nothing and
 * calls nothing while nobody listens.
 */
export function emitSafely<Events extends Record<EventType, unknown>, Key extends keyof Events>(
  events: Emitter<Events>,
  type: Key,
  event: Events[Key],
): void {
  const handlers = events.all.get(type) as Handler<Events[Key]>[] | undefined
  const wildcard = events.all.get('*') as WildcardHandler<Events>[] | undefined
  if (handlers !== undefined) for (const handler of handlers.slice()) guard(type, () => handler(event))
  if (wildcard !== undefined) for (const handler of wildcard.slice()) guard(type, () => handler(type, event))
}

function guard(type: PropertyKey, call: () => void): void {
  try {
    call()
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    process.emitWarning(`echostore: a '${String(type)}' event listener threw (${reason}); the table went on`, 'EchoStoreListenerWarning')
  }
}
