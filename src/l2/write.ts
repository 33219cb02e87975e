import type { RowTags } from '../tags/scope.js'
import type { L2Write } from './store.js'

/**
 * Builds every entry a table writes to L2, so a row and its L2 entry always agree: a value (or an
 * absent marker, for `undefined`) that lives exactly as long as the L1 row, or a tombstone.
 */
export const l2Write = {
  /** The entry of a row written at `now` that expires at `expiresAt` (at least 1 ms, as L2 lifetimes are) and is kept `grace` ms past it, with the row's tags. */
  row(value: unknown, version: number, expiresAt: number, now: number, grace: number, tags?: RowTags): L2Write {
    const ttl = Math.max(1, Math.ceil(expiresAt - now))
    const kept = Math.ceil(grace)
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
