import type { Row } from '../contenders/types.js'

/** The one row every loader returns: shared, so bytes per row measure the cache, not the value. */
export const ROW: Row = Object.freeze({ row: true })

/** An already-resolved promise of {@link ROW}: the "resolved-promise loader" returns it. */
export const RESOLVED: Promise<Row> = Promise.resolve(ROW)
