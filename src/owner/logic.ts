/**
 * The owner's actor logic, written the way xstate writes its own (`fromTransition`, `fromPromise`):
 * a plain object with `transition`, `getInitialSnapshot` and `getPersistedSnapshot`. The owner's
 * state is the snapshot's `context`; `transition` applies one batch of messages to it in place and
 * returns the same snapshot (legal in xstate, and no copy per message), or a `done` snapshot once
 * the table has closed and its last flight has answered, which stops the actor.
 *
 * Effects (starting loads, emitting events, arming timers) run through `defer`, after the state
 * change commits. The transition never throws: a throw would kill the actor and silently drop every
 * later message, leaving waiters pending forever; a handler that throws is reported as an `error`
 * event instead, and the batch goes on.
 */
import type { ActorLogic, ActorScope, ActorSystem, Snapshot } from 'xstate'
import { C } from '../core/counters.js'
import { emitSafely } from '../core/events.js'
import { onClear, onDelivery, onInvalidate, onPut } from './on-change.js'
import { onDeadline, onFlightDone, onL2Refused, onLoad, runStarted } from './on-flight.js'
import type { BatchEvent, Message } from './messages.js'
import { onSoftTimeout } from './grace.js'
import { onPlainMiss, onRefresh, onWait, onWaiterLeft } from './on-miss.js'
import type { OwnerEnv, OwnerState, Turn } from './state.js'
import { onSweep } from './on-sweep.js'

/** The owner's snapshot: xstate's status fields, and the owner's state as `context`. */
export type OwnerSnapshot<V> = Snapshot<undefined> & { context: OwnerState<V> }

/** What `getPersistedSnapshot` gives: the numbers, not the rows or flights (they hold promises and values; a cache restarts cold). */
export type PersistedOwner = Snapshot<undefined> & {
  context: { counters: number[]; size: number; inflight: number; coalesce: boolean; closing: boolean }
}

/** The owner's logic as an xstate actor logic: its event is a batch of messages; its input is its initial state. */
export type OwnerLogic<V> = ActorLogic<OwnerSnapshot<V>, BatchEvent<V>, OwnerState<V>, ActorSystem<any>>

/** Applies one message to the state. */
function handle<V>(turn: Turn<V>, message: Message<V>): void {
  switch (message.type) {
    case 'miss':
      return onPlainMiss(turn, message)
    case 'refresh':
      return onRefresh(turn, message)
    case 'soft':
      return onSoftTimeout(turn, message.flight)
    case 'wait':
      return onWait(turn, message)
    case 'waiter.left':
      return onWaiterLeft(turn, message.waiter, message.reason)
    case 'load':
      return onLoad(turn, message.id)
    case 'flight.done':
      return onFlightDone(turn, message.flight, message.result)
    case 'l2.refused':
      return onL2Refused(turn, message.flight)
    case 'deadline':
      return onDeadline(turn)
    case 'count':
      turn.state.counters[C[message.counter]]++
      return
    case 'put':
      return onPut(turn, message)
    case 'invalidate':
      return onInvalidate(turn, message)
    case 'clear':
      return onClear(turn, false, message.reply)
    case 'delivery':
      return onDelivery(turn, message.delivery)
    case 'sweep':
      return onSweep(turn, message.tick)
    case 'gate':
      turn.state.coalesce = message.on
      return
    case 'close':
      turn.state.closing = true
      turn.defer(() => turn.env.sweeper.stop())
      return
  }
}

/** The owner's actor logic for one table. */
export function ownerLogic<V>(env: OwnerEnv<V>): OwnerLogic<V> {
  function transition(snapshot: OwnerSnapshot<V>, event: BatchEvent<V>, scope: ActorScope<OwnerSnapshot<V>, BatchEvent<V>>): OwnerSnapshot<V> {
    if (event.type !== 'batch' || snapshot.status !== 'active') return snapshot // xstate's own lifecycle events
    const turn: Turn<V> = { state: snapshot.context, env, defer: scope.defer, started: [] }
    for (const message of event.messages) {
      try {
        handle(turn, message)
      } catch (error) {
        scope.defer(() => emitSafely(env.events, 'error', { table: env.name, id: undefined, error }))
      }
    }
    if (turn.started.length > 0) runStarted(turn)
    const state = snapshot.context
    if (!state.closing || state.inflight > 0) return snapshot
    state.deadlines.stop()
    return { status: 'done', output: undefined, error: undefined, context: state }
  }

  return {
    transition,
    getInitialSnapshot: (_scope, state) => ({ status: 'active', output: undefined, error: undefined, context: state }),
    getPersistedSnapshot: ({ status, context }): PersistedOwner => {
      const { counters, rows, inflight, coalesce, closing } = context
      const done = status === 'done'
      return { status: done ? 'done' : 'active', output: undefined, error: undefined, context: { counters: [...counters], size: rows.size, inflight, coalesce, closing } }
    },
  }
}
