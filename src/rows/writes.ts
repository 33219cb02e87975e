/**
 * The owner's writes to the rows, beside the rows: a fill or a put (`store`; a flight's through
 * `fill`), a tombstone (`bury`), and the version the table knows for an id (`known`). `store`, `fill`
 * and `bury` are called only from the owner's transition; `known`, a read, also from the change path to mint and guard versions.
 */
import { C } from '../core/counters.js'
import type { Id } from '../core/id.js'
import type { Flight } from '../owner/flight.js'
import type { OwnerState, Turn } from '../owner/state.js'

/** The tag keys a row carries and its birth on the tag version clock (see `tags/tag-versions.ts`). */
export interface RowTags {
  readonly keys: readonly string[]
  readonly born: number
}

/** The highest version this table holds for `id`: its row's (or tombstone's) and its joinable flight's; -1 when none. */
export function known<V>(state: OwnerState<V>, id: Id): number {
  const flight = state.flights.get(id)
  return Math.max(state.rows.version(id), flight === undefined ? -1 : flight.version)
}

/**
 * Writes a row for `id` (its slot may be given, from `rows.find`), with its tags if it has any; returns the write's stamp, or -1
 * when it was not stored: not cacheable, or a new id on a full table that admission refused. A new
 * id on a full table takes the place of the eviction hand's victim when admission lets it in.
 */
export function store<V>(turn: Turn<V>, id: Id, value: V | undefined, expiresAt: number | undefined, version: number, slot = turn.state.rows.find(id), tags?: RowTags): number {
  const { rows, counters } = turn.state
  if (expiresAt === undefined) {
    // Not cacheable (negativeTtl 0): drop the old row, but remember a known version.
    if (version > 0) bury(turn, id, version)
    else rows.delete(id)
    return -1
  }
  if (slot < 0 && rows.full) {
    if (!rows.evictFor(id, keepTombstonesAfter(turn))) {
      counters[C.full_skips]++
      return -1
    }
    counters[C.evictions]++
  }
  return rows.write(id, value, expiresAt, version, slot, tags)
}

/** Stores `flight`'s answer (or its fail-safe's graced value) as its id's row, as {@link store} does; a solo flight's write is counted in `soloFills` (see `Flight.slot`). */
export function fill<V>(turn: Turn<V>, flight: Flight<V>, value: V | undefined, expiresAt: number | undefined, version: number, slot: number, tags?: RowTags): number {
  if (!flight.joinable) turn.state.soloFills++
  return store(turn, flight.id, value, expiresAt, version, slot, tags)
}

/** The forget time after which a tombstone may still fence a running flight: one younger than a flight's bound stays. */
function keepTombstonesAfter<V>(turn: Turn<V>): number {
  const { clock, tombstoneLife, flightBound } = turn.env
  return clock.now() + tombstoneLife - flightBound
}

/** Replaces the row with a tombstone remembering `version` for `tombstoneLife`: `max(ttl, flight bound)` (none for a new id on a full table). */
export function bury<V>(turn: Turn<V>, id: Id, version: number): void {
  turn.state.rows.bury(id, version, turn.env.clock.now() + turn.env.tombstoneLife)
}
