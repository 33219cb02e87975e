import { C } from '../core/counters.js'
import { emitSafely } from '../core/events.js'
import { newSweepCursor } from '../rows/row-store.js'
import { SWEEP_SLICE, SWEEP_SLICE_MS } from './sweep-timer.js'
import type { Turn } from './state.js'
import { forgetMissedByL2 } from './row-writes.js'
import { clockVersion } from '../core/versions.js'

/**
 * Forgets the tag versions that can no longer change an answer (see `TagVersions.forget`): those
 * below the earliest birth of a tagged row held and of a flight in progress that is not fenced (a
 * fenced flight's answer is not stored); one L2 may not hold stays, with an L2, until it is older
 * than an entry's life (`l2EntryLife`): an entry written with the table's lifetimes is gone from L2
 * by then (one with a longer lifetime of its own, born before it, is reloaded once).
 * Called as each sweep pass starts: O(slots + tag keys) once per sweep period, so a process that
 * invalidates a tag per update keeps only the versions of its last rows' lifetime.
 */
export function forgetTagVersions<V>(turn: Turn<V>, now: number): void {
  const { state, env } = turn
  if (state.tags.size === 0) return
  let oldest = state.rows.oldestBirth()
  oldest = state.flights.oldestBorn(oldest)
  // A put in progress may still store a row born then.
  for (const ofId of state.puts.values()) for (const put of ofId) if (put.born < oldest) oldest = put.born
  state.tags.forget(oldest, env.l2EntryLife > 0 ? clockVersion(now - env.l2EntryLife) : Number.POSITIVE_INFINITY)
}

/**
 * What a walk starting at `now` may put off: a shard wholly reclaimable within two ticks (the next
 * tick puts it off again or drops it), if its earliest reclaimable row has waited little enough that
 * it is still reclaimed within a sweep period and a tick (its reclaim time is at least
 * `now + 2·interval − (period + interval)`).
 */
function putOffAt<V>(turn: Turn<V>, now: number): { into: number[]; wholeBy: number; dueSince: number } {
  const { sweepInterval, sweepPeriod } = turn.env
  return { into: turn.state.putOff, wholeBy: now + 2 * sweepInterval, dueSince: now + sweepInterval - sweepPeriod }
}

/**
 * A sweeper tick, or the next slice of a pass: a tick starts a pass when none runs and the last one
 * started at least a sweep period ago (`sweeps`); each slice walks at most {@link SWEEP_SLICE} rows
 * (plus one counting walk of each shard it starts) and {@link SWEEP_SLICE_MS} ms, a shard at a time,
 * and reclaims those whose expiry plus the grace (a tombstone: its forget time) has passed (`swept`); a pass that is not done asks the sweeper for the next slice.
 *
 * A walk puts off a shard whose rows will all be reclaimable within two ticks (see `putOffAt`):
 * the next tick walks the shards put off, alone, and drops each one that is wholly reclaimable by
 * then, puts it off once more, or walks it as a pass would (a shard written to meanwhile), so a
 * cohort that expires together costs one walk instead of two, and no row waits longer than a sweep
 * period and a tick past its reclaim time. A pass that follows one whose put-off shards were not
 * walked yet walks them itself and puts none off.
 */
export function onSweep<V>(turn: Turn<V>, tick: boolean): void {
  const { state, env } = turn
  const now = env.clock.now()
  if (state.sweep === undefined) {
    if (!tick) return
    if (now >= state.nextSweepAt) {
      const owed = state.putOff.length > 0
      state.putOff = []
      state.sweep = newSweepCursor(undefined, owed ? undefined : putOffAt(turn, now))
      state.nextSweepAt = now + env.sweepPeriod
      state.counters[C.sweeps]++
      forgetTagVersions(turn, now)
      forgetMissedByL2(state, now)
    } else if (state.putOff.length > 0) {
      const shards = state.putOff
      state.putOff = []
      state.sweep = newSweepCursor(shards, putOffAt(turn, now))
    } else {
      return
    }
  }
  const swept = state.rows.sweep(state.sweep, now, SWEEP_SLICE, performance.now() + SWEEP_SLICE_MS)
  state.counters[C.swept] += swept
  if (state.sweep.done) state.sweep = undefined
  else turn.defer(() => env.sweeper.continueSoon())
  if (swept > 0 && turn.listening) turn.defer(() => emitSafely(env.events, 'sweep', { table: env.name, swept }))
}
