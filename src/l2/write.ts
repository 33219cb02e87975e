import type { RowTags } from '../tags/scope.js'
import type { L2Write } from './store.js'

/**
 * Builds every entry a table writes to L2, so a row and its L2 entry always agree: a value (or an
 * absent marker, for `undefined`) that lives exactly as long as the L1 row, or a tombstone.
 *
 * Every entry stands in L2 at least a tombstone's life (`fence`: longer than any flight or put of
 * the table runs), past its row's expiry when that comes sooner: its version refuses the write-back
 * of a load that started before it, in a process that never heard of it (a bus message lost, or no
 * bus), whose loader ran longer than the row lives. Past its expiry (and its grace) it answers no
 * read; a load that reads it carries its version, so the load's own write is taken.
 */
export const l2Write = {
  /**
   * The entry of a row written at `now` that expires at `expiresAt` (at least 1 ms, as L2 lifetimes
   * are) and is kept `grace` ms past it, or longer, until `fence` ms from now, with the row's tags.
   */
  row(value: unknown, version: number, expiresAt: number, now: number, grace: number, fence: number, tags?: RowTags): L2Write {
    const ttl = Math.max(1, Math.ceil(expiresAt - now))
    const kept = Math.max(Math.ceil(grace), Math.ceil(fence) - ttl)
    const entry: L2Write = value === undefined ? { kind: 'absent', version, ttl, grace: kept } : { kind: 'value', value, version, ttl, grace: kept }
    if (tags !== undefined) {
      entry.tags = tags.keys
      entry.born = tags.born
    }
    return entry
  },
  /** A tombstone carrying `version`, living `life` ms: read as a miss, it still fences older writes. */
  tombstone(version: number, life: number): L2Write {
    return { kind: 'tombstone', version, ttl: Math.max(1, Math.ceil(life)) }
  },
}
