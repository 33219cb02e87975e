import type { Id } from './id.js'

/**
 * The events a table emits on `table.events` (a mitt emitter). Nothing is built or emitted
 * while nobody listens.
 */
export type TableEvents = {
  /** The loader was called for `id` (origin work). */
  load: { table: string; id: Id }
  /** A flight completed with an answer for `id` (stored, or skipped when the table was full). */
  fill: { table: string; id: Id; source: 'loader' | 'l2'; stored: boolean }
  /** A flight ended in an error (the loader failed, or `loadTimeout` passed), or the owner caught an internal fault (`id` undefined). */
  error: { table: string; id: Id | undefined; error: unknown }
  /** The sweeper reclaimed `swept` expired rows. */
  sweep: { table: string; swept: number }
  /** An L2 call failed or timed out (the fetch went on without L2); `id` is undefined for a call about the whole table (`clear`). */
  l2_error: { table: string; op: string; id: Id | undefined; error: unknown }
  /**
   * Callers of `id` were answered from its graced value, `staleness` ms past its expiry: by
   * stale-while-revalidate (`swr`), by the fail-safe after a failed load (`failsafe`) or during its
   * back-off (`backoff`), or when a load outlived its soft timeout (`soft`).
   */
  stale: { table: string; id: Id; callers: number; staleness: number; reason: 'swr' | 'failsafe' | 'backoff' | 'soft' }
  /** A coherence message was applied (`applied`) or dropped as not newer than what was held. */
  coherence: { table: string; id: Id; version: number; kind: 'put' | 'invalidate'; applied: boolean }
  /** The bus reported a gap (messages may have been lost): every L1 row was dropped. */
  gap: { table: string; dropped: number }
  /** The table was cleared, here (`remote` false) or by another instance on the bus: `dropped` L1 rows went. */
  clear: { table: string; dropped: number; remote: boolean }
}
