import { C } from '../core/counters.js'
import { emitSafely } from '../core/events.js'
import { newSweepCursor } from '../rows/row-store.js'
import { SWEEP_SLICE, SWEEP_SLICE_MS } from './sweep-timer.js'
import { type Turn, listening } from './state.js'

/**
 * A sweeper tick, or the next slice of a pass: a tick starts a pass when none runs and the last one
 * started at least a sweep period ago (`sweeps`); each slice walks at most {@link SWEEP_SLICE} rows
 * (plus one counting walk of each shard it starts) and {@link SWEEP_SLICE_MS} ms, a shard at a time,
 * and reclaims those whose expiry plus the grace (a tombstone: its forget time) has passed (`swept`); a pass that is not done asks the sweeper for the next slice.
 */
export function onSweep<V>(turn: Turn<V>, tick: boolean): void {
  const { state, env } = turn
  const now = env.clock.now()
  if (state.sweep === undefined) {
    if (!tick || now < state.nextSweepAt) return
    state.sweep = newSweepCursor()
    state.nextSweepAt = now + env.sweepPeriod
    state.counters[C.sweeps]++
  }
  const swept = state.rows.sweep(state.sweep, now, SWEEP_SLICE, performance.now() + SWEEP_SLICE_MS)
  state.counters[C.swept] += swept
  if (state.sweep.done) state.sweep = undefined
  else turn.defer(() => env.sweeper.continueSoon())
  if (swept > 0 && listening(turn)) turn.defer(() => emitSafely(env.events, 'sweep', { table: env.name, swept }))
}
