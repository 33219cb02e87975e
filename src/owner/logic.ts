/**
 * The owner's actor logic, written the way xstate writes its own (`fromTransition`, `fromPromise`):
 * a plain object with `transition`, `getInitialSnapshot` and `getPersistedSnapshot`. This comment is
 * the one place that says what xstate is used for.
 *
 * What xstate provides here: the actor's mailbox (a batch sent while one is being processed waits
 * its turn, never nests), `defer` (effects run after the state change commits), the lifecycle
 * (`active`, then `done` once the table is closed and drained and no batch waits in that mailbox,
 * after which the actor takes no event: see `Handover`), and inspection (`inspect` sees every batch
 * and every snapshot: a cold miss is two batches, the miss and the flight that carries its result;
 * the loader's call is counted as it happens, by the runners' port, and is no message). The owner's
 * working state (rows, flights, counters: see `state.ts`) is held by this logic and changed in place
 * by `transition`, for speed; what xstate stores and shows an inspector is a snapshot that is a
 * value: a new object after every batch, never changed afterwards, whose `value` is the table's
 * lifecycle (`running`, `draining` once closed with flights still running or a batch waiting,
 * `closed`) and whose `context` holds the coalescing gate, the flights running and the rows held at
 * that moment.
 *
 * The transition never throws: a throw would kill the actor and silently drop every later message,
 * leaving waiters pending forever; a handler that throws is reported as an `error` event instead,
 * the callers its message carries get what it threw (see `answerUnhandled`), and the batch goes on.
 */
import type { ActorLogic, ActorScope, ActorSystem, Snapshot } from 'xstate'
import { C } from '../core/counters.js'
import { emitSafely } from '../core/events.js'
import { onClear, onFenceAll, onDelivery, onInvalidate, onPut, onPutProgress, onTags } from './on-change.js'
import { type BatchEvent, type Message, answerUnhandled } from './messages.js'
import { onL2Graced, onSoftTimeout } from './grace.js'
import { onDeadline, onFlightDone, onL2Refused, onPlainMiss, onRefresh, onWait, onWaiterLeft, runStarted } from './single-flight.js'
import type { OwnerEnv, OwnerState, Turn } from './state.js'
import { onSweep } from './on-sweep.js'

/** The table's lifecycle: taking work, closed but still answering the flights that run (or a batch handed over behind the one processed), or stopped. */
export type Lifecycle = 'running' | 'draining' | 'closed'

/** The owner's snapshot, a value: xstate's status fields, the lifecycle as `value`, and the owner's figures at the end of a batch. */
export type OwnerSnapshot = Snapshot<undefined> & {
  value: Lifecycle
  context: { coalesce: boolean; closing: boolean; inflight: number; size: number }
}

/** What `getPersistedSnapshot` gives: the snapshot with a copy of the counters; never the rows or flights (they hold promises and values; a cache restarts cold). */
export type PersistedOwner = OwnerSnapshot & { context: OwnerSnapshot['context'] & { counters: number[] } }

/** The owner's logic as an xstate actor logic: its event is a batch of messages. */
// biome-ignore lint/suspicious/noExplicitAny: xstate's own `AnyActorSystem` is `ActorSystem<any>`
export type OwnerLogic<V> = ActorLogic<OwnerSnapshot, BatchEvent<V>, undefined, ActorSystem<any>>

/** Applies one message to the state. */
function handle<V>(turn: Turn<V>, message: Message<V>): void {
  switch (message.type) {
    case 'miss':
      return onPlainMiss(turn, message)
    case 'refresh':
      return onRefresh(turn, message)
    case 'soft':
      return onSoftTimeout(turn, message.flight)
    case 'l2.graced':
      return onL2Graced(turn, message.flight, message.fallback)
    case 'wait':
      return onWait(turn, message)
    case 'waiter.left':
      return onWaiterLeft(turn, message.waiter, message.reason)
    case 'flight.done':
      return onFlightDone(turn, message)
    case 'l2.refused':
      return onL2Refused(turn, message.flight)
    case 'deadline':
      return onDeadline(turn)
    case 'count':
      turn.state.counters[C[message.counter]]++
      return
    case 'put':
      return onPut(turn, message)
    case 'put.progress':
      return onPutProgress(turn, message.put, message.began)
    case 'invalidate':
      return onInvalidate(turn, message)
    case 'tags':
      return onTags(turn, message.keys, message.versions, message.taken, message.scope, message.reply)
    case 'clear':
      return onClear(turn, false, message.l2Moved, message.reply)
    case 'fence':
      return onFenceAll(turn, message.reply)
    case 'delivery':
      return onDelivery(turn, message.delivery)
    case 'sweep':
      return onSweep(turn, message.tick)
    case 'gate':
      turn.state.coalesce = message.on
      return
    case 'close':
      turn.defer(() => turn.env.sweeper.stop())
      return
  }
}

/**
 * The batches handed to the actor and the batches its transition took. A batch handed over while one
 * is processed (`close()` or a fetch from a `sizeOf`, an inspector, an abort listener the owner fires)
 * waits in xstate's mailbox, and xstate's stop empties that mailbox without processing it: so the owner
 * never stops while a batch waits behind the one it processes (see `snapshotOf`), and every message is
 * either handled by the transition or, once the owner has stopped, answered by `refuse` (`owner.ts`).
 */
export class Handover {
  /** Batches sent to the actor: written only by the owner's `deliver` (`owner.ts`), just before it sends one. */
  handed = 0
  /** Batches the transition began: written only by the transition. */
  taken = 0
}

/** The snapshot of `state` now: a new value. `waiting`: a batch was handed to the actor that its transition has not taken yet. */
function snapshotOf<V>(state: OwnerState<V>, closing: boolean, waiting: boolean): OwnerSnapshot {
  // Closed and drained, with no batch waiting: xstate's stop would drop one (see `Handover`).
  const done = closing && state.flights.running === 0 && !waiting
  const context = { coalesce: state.coalesce, closing, inflight: state.flights.running, size: state.rows.size }
  return { status: done ? 'done' : 'active', output: undefined, error: undefined, value: done ? 'closed' : closing ? 'draining' : 'running', context }
}

/** The owner's actor logic for one table, working on `state` (see the module comment). */
export function ownerLogic<V>(env: OwnerEnv<V>, state: OwnerState<V>, handover: Handover): OwnerLogic<V> {
  /** The actor's scope, as the batch being processed was given it (xstate gives one actor the same): written only by {@link transition}. */
  let scope: ActorScope<OwnerSnapshot, BatchEvent<V>> | undefined
  // One `defer` for every turn. An effect that throws (a hostile signal's listener, say) is reported
  // like a handler that throws: a throw out of an effect would stop the actor and leave every later caller pending.
  const defer = (effect: () => void): void =>
    scope!.defer(() => {
      try {
        effect()
      } catch (error) {
        emitSafely(env.events, 'error', { table: env.name, id: undefined, error })
      }
    })

  function transition(snapshot: OwnerSnapshot, event: BatchEvent<V>, actorScope: ActorScope<OwnerSnapshot, BatchEvent<V>>): OwnerSnapshot {
    if (event.type !== 'batch') return snapshot // xstate's own lifecycle events
    handover.taken++
    if (snapshot.status !== 'active') return snapshot // never: a batch is handed only to an active owner, which stops with none waiting
    scope = actorScope
    const turn: Turn<V> = { state, env, listening: env.events.all.size > 0, defer, started: [] }
    for (const message of event.messages) {
      try {
        handle(turn, message)
      } catch (error) {
        // Its callers get what it threw rather than wait for ever (a hostile clock or sizeOf; never the owner's own code).
        answerUnhandled(message, () => error)
        actorScope.defer(() => emitSafely(env.events, 'error', { table: env.name, id: undefined, error }))
      }
    }
    if (turn.started.length > 0) runStarted(turn)
    if (state.flights.fencedHolders !== undefined) state.flights.endFencedLeases(defer)
    const next = snapshotOf(state, env.closing(), handover.handed > handover.taken)
    if (next.status === 'done') state.flights.stop()
    return next
  }

  return {
    transition,
    getInitialSnapshot: () => snapshotOf(state, false, false),
    getPersistedSnapshot: (snapshot: OwnerSnapshot): PersistedOwner => ({ ...snapshot, context: { ...snapshot.context, counters: [...state.counters] } }),
  }
}
