/**
 * The owner's writes to the rows, beside the rows: a fill or a put (`store`; a flight's through
 * `fill`), a tombstone (`bury`), and the version the table knows for an id (`known`). `store`, `fill`
 * and `bury` are called only from the owner's transition; `known`, a read, also from the change path to mint and guard versions.
 */
import { C } from '../core/counters.js'
import { badArgument, describe, reasonOf } from '../core/errors.js'
import { emitSafely } from '../core/events.js'
import { type Id, callerIdOf } from '../core/id.js'
import type { RowTags } from '../tags/scope.js'
import type { Flight } from '../flight/flight.js'
import type { OwnerState, Turn } from './state.js'

/** The highest version this table holds for `id`: its row's (or tombstone's), its joinable flight's, and a change's L2 missed; -1 when none. */
export function known<V>(state: OwnerState<V>, id: Id): number {
  return Math.max(state.rows.version(id), state.flights.versionOf(id), missedByL2(state, id))
}

/** The version of `id`'s change whose L2 write failed, while kept (see `OwnerState.missedByL2`); -1 when none. */
export function missedByL2<V>(state: OwnerState<V>, id: Id): number {
  return state.missedByL2.size === 0 ? -1 : (state.missedByL2.get(id)?.version ?? -1)
}

/**
 * A change of `id` at `version` (applied to the rows) whose L2 write failed: its version is kept
 * until every older entry L2 may hold for the id is gone: an entry written up to now with the
 * table's lifetimes (`l2EntryLife`), any this table wrote with a longer one (a `setTtl` or put
 * `ttl`; its row may be gone), and the replaced row's own (read from an entry another process
 * wrote), each kept `grace` past its expiry. Call before the change writes the row.
 */
export function rememberMissedByL2<V>(turn: Turn<V>, id: Id, version: number): void {
  const { state, env } = turn
  const slot = state.rows.find(id)
  const replaced = slot < 0 ? -1 : state.rows.expiryAt(slot) + env.grace // a tombstone's is negative
  const forgetAt = Math.max(env.clock.now() + env.l2EntryLife, env.runner.l2?.writtenUntil ?? -1, replaced)
  // The change was applied, so no kept version is above it (`known` refused it otherwise).
  state.missedByL2.set(id, { version, forgetAt: Math.max(forgetAt, state.missedByL2.get(id)?.forgetAt ?? -1) })
}

/** Forgets the kept versions of changes L2 missed whose older entries are gone by `now` (the sweeper's tick). */
export function forgetMissedByL2<V>(state: OwnerState<V>, now: number): void {
  for (const [id, { forgetAt }] of state.missedByL2) if (forgetAt <= now) state.missedByL2.delete(id)
}

/**
 * Writes a row for `id` (its slot may be given, from `rows.find`), with its tags if it has any; returns the write's stamp, or -1
 * when it was not stored: not cacheable, a value `sizeOf` weighs above `maxSize` (`heavy_skips`) or
 * cannot weigh (`sizeof_errors`), or a new id on a full table that admission refused (`full_skips`).
 * A write that needs room (a new id on a table full by rows, or a weight that would pass `maxSize`)
 * evicts the hands' victims when admission lets it in (see `RowStore.makeRoom`). A write not stored
 * drops the id's old row, which no longer holds what the origin has.
 */
export function store<V>(turn: Turn<V>, id: Id, value: V | undefined, expiresAt: number | undefined, version: number, slot = turn.state.rows.find(id), tags?: RowTags, admitted = false): number {
  const { rows, counters } = turn.state
  if (expiresAt === undefined) return drop(turn, id, version) // not cacheable (negativeTtl 0)
  // A negative row holds no value: it weighs nothing, and `capacity` bounds it.
  const weight = value === undefined || !rows.weighed ? 0 : weigh(turn, id, value)
  if (weight < 0) return drop(turn, id, version)
  if (weight > rows.maxSize) {
    counters[C.heavy_skips]++
    return drop(turn, id, version)
  }
  if (rows.needsRoom(slot, weight)) {
    const evicted = rows.makeRoom(id, slot, weight, keepTombstonesAfter(turn), turn.env.clock.now(), admitted)
    if (evicted < 0) {
      counters[C.full_skips]++
      return slot < 0 ? -1 : drop(turn, id, version)
    }
    counters[C.evictions] += evicted
  }
  return rows.write(id, value, expiresAt, version, slot, tags, weight)
}

/** Drops `id`'s row, remembering a known version as a tombstone; returns -1 (nothing stored). */
function drop<V>(turn: Turn<V>, id: Id, version: number): -1 {
  if (version > 0) bury(turn, id, version)
  else turn.state.rows.delete(id)
  return -1
}

/**
 * The weight `sizeOf` gives `value`; -1 when it throws or answers anything but an integer ≥ 0:
 * counted in `sizeof_errors` and reported as an `error` event naming the id and what was wrong.
 */
function weigh<V>(turn: Turn<V>, id: Id, value: V): number {
  let weight: unknown
  try {
    weight = turn.env.sizeOf!(value, callerIdOf(id)) // in a namespace view, the id its caller gave, as the loader gets it
  } catch (error) {
    return badWeight(turn, id, `threw (${reasonOf(error)})`, error)
  }
  if (typeof weight === 'number' && Number.isSafeInteger(weight) && weight >= 0) return weight
  return badWeight(turn, id, `returned ${describe(weight)}`)
}

function badWeight<V>(turn: Turn<V>, id: Id, what: string, cause?: unknown): -1 {
  turn.state.counters[C.sizeof_errors]++
  const { env } = turn
  if (turn.listening) {
    const error = badArgument(
      TypeError,
      `option "sizeOf" ${what} for id ${describe(callerIdOf(id))} of table "${env.name}"; it must return an integer ≥ 0 (in the units of "maxSize"). The row was not stored`,
      cause === undefined ? undefined : { cause },
    )
    turn.defer(() => emitSafely(env.events, 'error', { table: env.name, id, error }))
  }
  return -1
}

/**
 * Stores `flight`'s answer (or its fail-safe's graced value, `admitted` whatever admission says: it
 * holds the origin off for the id) as its id's row, as {@link store} does; a solo flight's write is
 * counted in `soloFills` (see `Flight.slot`).
 */
export function fill<V>(turn: Turn<V>, flight: Flight<V>, value: V | undefined, expiresAt: number | undefined, version: number, slot: number, tags?: RowTags, admitted = false): number {
  if (!flight.joinable) turn.state.soloFills++
  return store(turn, flight.id, value, expiresAt, version, slot, tags, admitted)
}

/** The forget time after which a tombstone may still fence a running flight: one younger than a flight's bound stays. */
function keepTombstonesAfter<V>(turn: Turn<V>): number {
  const { clock, tombstoneLife, flightBound } = turn.env
  return clock.now() + tombstoneLife - flightBound
}

/**
 * Replaces the row with a tombstone remembering `version` for `tombstoneLife`: `max(ttl, flight
 * bound, 3 L2 timeouts)` (none for a new id on a full table). A tombstone of an id with nothing to fence (no row, no
 * flight, no put in progress: a local change of an id never read) is never young (see
 * `RowStore.bury`): it goes through eviction as a row does, so a batch of such changes cannot keep
 * new ids out of a full table. No flight of its id runs yet, and a later one reads L2's tombstone
 * (or the change L2 missed), not this one. Call it before a fence takes the id's flight out of the
 * registry, so it sees what there is to fence.
 */
export function bury<V>(turn: Turn<V>, id: Id, version: number): void {
  const { state, env } = turn
  state.rows.bury(id, version, env.clock.now() + env.tombstoneLife, holdsSomething(state, id))
}

/** True when the table holds something of `id` a change must fence: a row (or tombstone), a flight, or a put in progress. */
export function holdsSomething<V>(state: OwnerState<V>, id: Id): boolean {
  return state.rows.has(id) || state.flights.has(id) || state.puts.has(id)
}
