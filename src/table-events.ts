import type { Id } from './id.js'

/**
 * The events a table emits on `table.events` (a mitt emitter). Nothing is built or emitted
 * while nobody listens.
 */
export type TableEvents = {
  /** The loader was called for `id` (origin work). */
  load: { table: string; id: Id }
  /** A flight completed with an answer for `id` (stored, or skipped when the table was full). */
  fill: { table: string; id: Id; source: 'loader' | 'l2' }
  /** A flight ended in an error (the loader failed, or `loadTimeout` passed), or the owner caught an internal fault (`id` undefined). */
  error: { table: string; id: Id | undefined; error: unknown }
  /** The sweeper reclaimed `swept` expired rows. */
  sweep: { table: string; swept: number }
}
