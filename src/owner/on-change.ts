/**
 * The owner's handling of changes: local puts, invalidates and clears, coherence messages from other
 * instances, and bus gaps. Every row remembers the version of what it holds, and an invalidation
 * leaves a tombstone that remembers its version. A change newer than a flight's starting version
 * fences that flight: its waiters still get its answer, but it is no longer joinable and its answer
 * is not stored. A put in progress is fenced the same way by a change heard from another process,
 * a clear or a bus gap: its value is not stored (see `OwnerState.puts`).
 */
import { parseCoherenceMessage } from '../bus/message.js'
import { busEvent } from '../core/channels.js'
import { C } from '../core/counters.js'
import { emitSafely } from '../core/events.js'
import type { Id } from '../core/id.js'
import type { UnfilledMessage } from '../bus/bus.js'
import type { HolderEnd } from '../flight/flight.js'
import { NOT_LIVE } from '../rows/row-store.js'
import type { InvalidateMessage, PutMessage } from './messages.js'
import { bury, holdsSomething, known, rememberMissedByL2, store } from './row-writes.js'
import type { PutInProgress } from './messages.js'
import type { OwnerState, Turn } from './state.js'
import { ROOT_SCOPE, Scope } from '../tags/scope.js'

/**
 * Wakes the flights waiting on another process's lease of `id` (every id's, for `undefined`), after
 * this turn: a fill was announced, or a change arrived, so they look at L2 again at once; or the holder
 * said it ended without a fill (`ended`: how, see {@link onUnfilled}), so they take over or fail
 * with it. Called before a fence takes the flight out of the flights map.
 */
function wakeWaiting<V>(turn: Turn<V>, id: Id | undefined, ended?: HolderEnd): void {
  turn.state.flights.wake(id, turn.defer, ended)
}

/**
 * The holder of `id`'s lease in another process ended without a fill: the flights waiting on it here
 * give its lease back and one takes over. When its loader failed, they fail with it instead, as the
 * waiters of a flight fail with it in one process (the fail-safe answers their callers where there
 * is a graced value); and with grace, a graced row of the id is held off for `graceBackoff`, so its
 * next misses get that value at once (`stale` reason `backoff`), as in the holder's process.
 */
function onUnfilled<V>(turn: Turn<V>, message: UnfilledMessage): void {
  const { id, lease } = message
  const failed = message.failed === true
  if (failed && turn.env.grace > 0) holdOffGraced(turn, id)
  wakeWaiting(turn, id, { lease, failed })
}

/** Keeps the origin from being tried for `id` for `graceBackoff` from now, when its row holds a graced value (never shortening a back-off already on). */
function holdOffGraced<V>(turn: Turn<V>, id: Id): void {
  const { state, env } = turn
  const now = env.clock.now()
  const slot = state.rows.find(id)
  if (state.rows.gracedAt(slot, now) === NOT_LIVE) return
  state.rows.holdOff(slot, Math.max(state.rows.retryAt(slot), now + env.graceBackoff))
}

/**
 * A put began (before it asks L2) or ended: kept in `state.puts` while it is in progress, and no
 * longer. It ends as the owner handles its outcome (see {@link onPut}), or, when it never got that
 * far (it threw, or the table closed), with its end message.
 */
export function onPutProgress<V>(turn: Turn<V>, put: PutInProgress, began: boolean): void {
  if (!began) return endPut(turn.state, put)
  const { puts } = turn.state
  const ofId = puts.get(put.id)
  if (ofId === undefined) puts.set(put.id, new Set([put]))
  else ofId.add(put)
}

/** Takes `put` out of `state.puts`, if it is still there. */
function endPut<V>(state: OwnerState<V>, put: PutInProgress): void {
  const ofId = state.puts.get(put.id)
  if (ofId?.delete(put) && ofId.size === 0) state.puts.delete(put.id)
}

/** Fences the puts of `id` in progress (every id's, for `undefined`) with a change of `version` made here or heard from another process, or a clear or a gap (+∞). */
function fencePuts<V>(state: OwnerState<V>, id: Id | undefined, version: number): void {
  const fenceAll = (ofId: Set<PutInProgress> | undefined) => ofId?.forEach((put) => (put.fencedAt = Math.max(put.fencedAt, version)))
  if (id === undefined) state.puts.forEach(fenceAll)
  else fenceAll(state.puts.get(id))
}

/**
 * A local put: applied unless L2 refused it, something newer is known, or a change heard while it
 * was in progress fenced it (an equal version from another process may be another change: the put
 * is not applied, and the next read finds what L2 holds); fences older flights of the id.
 */
export function onPut<V>(turn: Turn<V>, put: PutMessage<V>): void {
  const { id, version } = put
  const { state } = turn
  endPut(state, put.progress)
  state.rows.countRequests(id, 1)
  if (version < known(state, id)) return put.reply(false, version)
  // A tag of its row invalidated while it was in progress (here, or heard) makes it as stale as a load born then.
  const staleByTags = put.tags !== undefined && state.tags.stale(put.tags.keys, put.tags.born)
  if (version <= put.progress.fencedAt || staleByTags) {
    // A newer change (here or heard), a clear or a bus gap fenced it, or a tag of its row was
    // invalidated, while L2 took its value: the row it would have replaced holds what the put
    // replaced, so it goes too (a tombstone at the put's version), and the next read goes to L2,
    // rather than serve that row until a clear ends. A flight of the id that started since (it found
    // no row, or the row buried here) is fenced as by any change that writes the id's row.
    bury(turn, id, version) // before the fence takes the id's flight out of the registry: it sees what there is to fence
    turn.state.flights.fenceId(id, version)
    return put.reply(false, version)
  }
  if (put.refused) {
    // L2 holds something newer than this put: what this table holds is older still, so it goes
    // (a tombstone at the put's version), and the next read finds the newer entry in L2.
    wakeWaiting(turn, id)
    bury(turn, id, version) // before the fence takes the id's flight out of the registry: it sees what there is to fence
    turn.state.flights.fenceId(id, version)
    return put.reply(false, version)
  }
  wakeWaiting(turn, id)
  if (put.tags !== undefined) turn.state.versions.observe(put.tags.born)
  if (put.missedByL2) rememberMissedByL2(turn, id, version)
  // Stored (or, when it cannot be, a tombstone) before the fence takes the id's flight out of the registry: `bury` sees what there is to fence.
  store(turn, id, put.value, put.expiresAt, version, undefined, put.tags)
  state.flights.fenceId(id, version)
  fencePuts(state, id, version) // an older put in progress is refused by this, whatever becomes of this row
  put.reply(true, version)
}

/**
 * Tag keys got new versions (here, or heard on the bus): every row carrying one of them from before
 * goes stale at once (its next read compares, nothing walks the rows), and every flight in `scope`
 * is fenced, as its answer's tags are known only once it ends (its waiters still get it). `taken`:
 * L2 minted the versions (made here, or heard from a table whose L2 is this one's key space and
 * minted them); any other may be one L2 did not take, and is kept as such (see `TagVersions.forget`).
 */
export function onTags<V>(turn: Turn<V>, keys: readonly string[], versions: readonly number[], taken: boolean, scope: Scope, reply?: (applied: boolean) => void): void {
  const { state } = turn
  wakeWaiting(turn, undefined)
  keys.forEach((key, i) => {
    state.versions.observe(versions[i]!)
    state.tags.raise(key, versions[i]!, taken)
  })
  state.flights.fenceScope(scope)
  state.counters[C.tag_invalidations] += keys.length
  reply?.(true)
}

/** A local invalidate: a tombstone unless something newer is known; fences older flights of the id. */
export function onInvalidate<V>(turn: Turn<V>, change: InvalidateMessage): void {
  const { id, version } = change
  if (version < known(turn.state, id)) return change.reply(false, version)
  wakeWaiting(turn, id)
  if (change.missedByL2) rememberMissedByL2(turn, id, version)
  bury(turn, id, version) // before the fence takes the id's flight out of the registry: it sees what there is to fence
  turn.state.flights.fenceId(id, version)
  fencePuts(turn.state, id, version) // an older put in progress is refused by this, not by a tombstone the sweeper may take first
  change.reply(true, version)
}

/** Whatever the bus delivered, validated here whatever transport brought it: a gap, a coherence message, or something to count and drop. */
export function onDelivery<V>(turn: Turn<V>, delivery: unknown): void {
  const { state, env } = turn
  const type = readField(delivery, 'type')
  if (type === 'gap') return onGap(turn)
  if (type === 'foreign') {
    // A message of another key space (another environment sharing the channel): never applied.
    state.counters[C.coh_foreign]++
    return
  }
  const parsed = type === 'message' ? parseCoherenceMessage(readField(delivery, 'message')) : undefined
  if (parsed === undefined || !parsed.ok) {
    state.counters[C.coh_invalid]++
    busEvent(env.name, 'refused', undefined, 'invalid')
    return
  }
  const message = parsed.message
  if (message.table !== env.name || message.origin === env.origin) return
  if (message.space !== undefined && env.space !== undefined && message.space !== env.space) {
    // Published by a table of this name whose L2 is another key space (another environment): never applied.
    state.counters[C.coh_foreign]++
    return
  }
  if (message.kind === 'clear' || message.kind === 'fill') busEvent(env.name, 'received', message)
  // A version the publisher's L2 minted is held by this table's L2 only when both name one key space.
  const taken = message.space !== undefined && message.space === env.space
  if (message.kind === 'clear' && message.scope !== undefined) {
    const scope = new Scope(message.scope)
    state.counters[C.coh_applied]++
    return onTags(turn, [scope.clearKey!], [message.version ?? 0], taken && message.taken === true, scope)
  }
  if (message.kind === 'clear') return onClear(turn, true, taken && message.taken === true)
  if (message.kind === 'tag') {
    const scope = message.scope.length === 0 ? ROOT_SCOPE : new Scope(message.scope)
    busEvent(env.name, 'received', message)
    state.counters[C.coh_applied]++
    return onTags(turn, [scope.tagKey(message.tag)], [message.version], taken && message.taken === true, scope)
  }
  if (message.kind === 'fill') return wakeWaiting(turn, message.id)
  if (message.kind === 'unfilled') return onUnfilled(turn, message)
  const { id, version, kind } = message
  // An equal version from another origin may be another change (two writers that minted alike while
  // L2 was down): dropping the row is always safe, so it applies.
  const applied = version >= known(state, id)
  if (applied) {
    // A tombstone only where there is something to fence (a row, a flight, a put in progress, whose
    // next read must not take an older entry from L2): messages about ids this table never read must
    // not use up its capacity.
    const holds = holdsSomething(state, id)
    wakeWaiting(turn, id)
    if (holds) bury(turn, id, version) // before the fence takes the id's flight out of the registry: it sees what there is to fence
    state.flights.fenceId(id, version)
    fencePuts(state, id, version)
    state.counters[C.coh_applied]++
    busEvent(env.name, 'received', message)
  } else {
    state.counters[C.coh_stale]++
    busEvent(env.name, 'refused', message, 'stale')
  }
  if (turn.listening) turn.defer(() => emitSafely(env.events, 'coherence', { table: env.name, id, version, kind, applied }))
}

/** A field of an untrusted delivery; `undefined` when it is not an object or reading it throws (a hostile getter or proxy). */
function readField(delivery: unknown, key: 'type' | 'message'): unknown {
  try {
    return typeof delivery === 'object' && delivery !== null ? (delivery as Record<string, unknown>)[key] : undefined
  } catch {
    return undefined
  }
}

/** Drops every L1 row and fences every running flight (their waiters still get their answers, which are not stored); returns the rows dropped. */
function dropEverything<V>(state: OwnerState<V>): number {
  const dropped = state.rows.size
  state.rows.clear()
  // The tag versions stay: the sweeper forgets them as it does any (see `forgetTagVersions`), and
  // until then they still hide L2's entries older than an invalidation L2 did not take.
  fenceEverything(state)
  return dropped
}

/** Fences every running flight (their waiters still get their answers, which are stored in neither layer) and every put in progress (its value is not stored in L1). */
function fenceEverything<V>(state: OwnerState<V>): void {
  state.flights.fenceAll()
  fencePuts(state, undefined, Infinity)
}

/** A local clear is about to move L2: every flight in progress is fenced first, so none writes its answer into the next generation. */
export function onFenceAll<V>(turn: Turn<V>, reply: () => void): void {
  wakeWaiting(turn, undefined)
  fenceEverything(turn.state)
  reply()
}

/**
 * The table was cleared, here or by another instance (`remote`): nothing loaded before it is answered
 * again. `l2Moved`: this table's L2 moved to a new generation with it (a local clear whose L2 cleared,
 * or a remote one whose publisher's L2 did, in this table's key space), so no older entry is read
 * again and the changes L2 missed are forgotten; otherwise they stand (see `OwnerState.missedByL2`).
 */
export function onClear<V>(turn: Turn<V>, remote: boolean, l2Moved: boolean, reply?: () => void): void {
  const { state, env } = turn
  wakeWaiting(turn, undefined)
  const dropped = dropEverything(state)
  if (l2Moved) state.missedByL2.clear()
  state.counters[C.clears]++
  reply?.()
  if (turn.listening) turn.defer(() => emitSafely(env.events, 'clear', { table: env.name, dropped, remote }))
}

/** The bus may have lost messages: drop every L1 row and fence every running flight. */
function onGap<V>(turn: Turn<V>): void {
  const { state, env } = turn
  wakeWaiting(turn, undefined)
  const dropped = dropEverything(state)
  state.counters[C.coh_gaps]++
  busEvent(env.name, 'gap')
  state.counters[C.coh_dropped] += dropped
  if (turn.listening) turn.defer(() => emitSafely(env.events, 'gap', { table: env.name, dropped }))
}
