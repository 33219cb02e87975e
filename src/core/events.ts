/**
 * A table's events, in one place: what it emits (`TableEvents`), how its mitt emitter is made in
 * every build (`createEmitter`), and how events reach listeners without a throwing listener ever
 * reaching the table (`emitSafely`).
 */
import { reasonOf } from './errors.js'
import mitt, { type Emitter, type EventType, type Handler, type WildcardHandler } from 'mitt'
import type { Id } from './id.js'

/**
 * The events a table emits on `table.events` (a mitt emitter). Nothing is built or emitted
 * while nobody listens.
 */
export type TableEvents = {
  /** The loader was called for `id` (origin work). */
  load: { table: string; id: Id }
  /** A flight completed with an answer for `id`; `stored` is false when it was not stored: fenced, refused by L2, not cacheable, or refused admission on a full table. */
  fill: { table: string; id: Id; source: 'loader' | 'l2'; stored: boolean }
  /** A flight ended in an error (the loader failed, or its bound passed), a broadcast failed (`id` undefined for a clear), or the owner caught an internal fault (`id` undefined). */
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
  /** A coherence message was applied (`applied`) or dropped as older than what was held. */
  coherence: { table: string; id: Id; version: number; kind: 'put' | 'invalidate'; applied: boolean }
  /** The bus reported a gap (messages may have been lost): every L1 row was dropped. */
  gap: { table: string; dropped: number }
  /** The table was cleared, here (`remote` false) or by another instance on the bus: `dropped` L1 rows went. */
  clear: { table: string; dropped: number; remote: boolean }
}

/*
 * Creating mitt emitters in a way every build of EchoStore compiles and runs. mitt's types describe
 * a CommonJS module whose `default` is the factory; under `moduleResolution: NodeNext` an ES module
 * reads that default import as the whole module, which is not callable, while Node's `import` loads
 * mitt's ES build, whose default export is the factory itself. `createEmitter` takes whichever the
 * running build holds, so nothing else calls the default import.
 */
/** mitt's factory, as its declarations type it. */
type MittFactory = <Events extends Record<EventType, unknown>>() => Emitter<Events>

const factory: MittFactory = typeof mitt === 'function' ? mitt : (mitt as { default: MittFactory }).default

/** A new, empty mitt emitter for `Events`. */
export function createEmitter<Events extends Record<EventType, unknown>>(): Emitter<Events> {
  return factory<Events>()
}

/**
 * Emits `event` to every listener of `type` (then to `'*'` listeners), each in its own try/catch:
 * a listener that throws is reported as a process warning and never reaches the table (a throw in
 * the owner's effects would stop its actor, leaving every later fetch pending). Builds nothing and
 * calls nothing while nobody listens.
 */
export function emitSafely<Events extends Record<EventType, unknown>, Key extends keyof Events>(events: Emitter<Events>, type: Key, event: Events[Key]): void {
  const handlers = events.all.get(type) as Handler<Events[Key]>[] | undefined
  const wildcard = events.all.get('*') as WildcardHandler<Events>[] | undefined
  if (handlers !== undefined) for (const handler of handlers.slice()) guard(type, () => handler(event))
  if (wildcard !== undefined) for (const handler of wildcard.slice()) guard(type, () => handler(type, event))
}

function guard(type: PropertyKey, call: () => void): void {
  try {
    call()
  } catch (error) {
    const reason = reasonOf(error)
    process.emitWarning(`echostore: a '${String(type)}' event listener threw (${reason}); the table went on`, 'EchoStoreListenerWarning')
  }
}
