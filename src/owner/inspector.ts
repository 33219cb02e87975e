/**
 * The type of the `inspect` option, declared here rather than taken from xstate: xstate's own
 * declarations do not compile under `exactOptionalPropertyTypes` with `skipLibCheck: false`, so a
 * published type that imported them would break such a project. Every xstate `InspectionEvent` is
 * an {@link OwnerInspectionEvent}, and an observer written against xstate's `InspectionEvent` is
 * accepted as an {@link OwnerInspector}.
 */
import { reasonOf } from '../core/errors.js'

/**
 * What every inspection event carries.
 * @inline
 */
interface InspectionBase {
  /** The id of the actor system's root. */
  rootId: string
  /** The actor the event is about (xstate's `ActorRefLike`). */
  actorRef: unknown
}

/** What the owner actor reports to an inspector: xstate's `InspectionEvent`, described by its shape. */
export type OwnerInspectionEvent =
  | (InspectionBase & { type: '@xstate.event'; event: { type: string }; sourceRef: unknown })
  | (InspectionBase & { type: '@xstate.snapshot' | '@xstate.transition' | '@xstate.microstep'; event: { type: string }; snapshot: unknown })
  | (InspectionBase & { type: '@xstate.action'; action: { type: string; params: unknown } })
  | (InspectionBase & { type: '@xstate.actor' })

/**
 * The function form, declared as a method so that a function typed with xstate's `InspectionEvent` fits it too.
 * @inline
 */
interface InspectorFunction {
  /** Called with every inspection event, synchronously, as it happens. */
  inspect(event: OwnerInspectionEvent): void
}

/** An inspection observer: a function, or an `{ next }` object as xstate's `Observer`. */
export type OwnerInspector =
  | InspectorFunction['inspect']
  | {
      /** Called with every inspection event, synchronously, as it happens. */
      next?(event: OwnerInspectionEvent): void
      /** Never called: xstate calls only `next` (the field is `Observer`'s shape). */
      error?(error: unknown): void
      /** Never called: xstate calls only `next` (the field is `Observer`'s shape). */
      complete?(): void
    }

/**
 * `observer`, made unable to stop the owner: what it throws is reported as a process warning
 * (`EchoStoreListenerWarning`, as for a throwing event listener) and the table goes on. xstate calls
 * inspection observers inside the actor's own processing, where a throw would kill the actor.
 */
export function guardInspector(observer: OwnerInspector): OwnerInspector {
  const guard =
    <A extends unknown[]>(call: ((...args: A) => void) | undefined, self: unknown) =>
    (...args: A): void => {
      try {
        call?.apply(self, args)
      } catch (error) {
        const reason = reasonOf(error)
        process.emitWarning(`echostore: an inspect observer threw (${reason}); the table went on`, 'EchoStoreListenerWarning')
      }
    }
  if (typeof observer === 'function') return guard(observer, undefined)
  return { next: guard(observer.next, observer) } // xstate calls only `next`
}
