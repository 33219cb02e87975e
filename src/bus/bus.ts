import type { Id } from '../core/id.js'

/** What every coherence message may carry besides the fields of its kind. */
export interface InKeySpace {
  /**
   * The key space of the publishing table's L2 (its store's `keySpace`, a `redisL2`'s prefix),
   * when it has one: a table whose L2 has another ignores the message (`coh_foreign`). Absent: every
   * table applies it (a table without one, or a publisher older than this field).
   */
  space?: string
}

/**
 * A change of one id. It carries no value: a `put` has already written L2 (version-checked)
 * before it is broadcast, and receivers drop their row and read L2 next time.
 */
export interface ChangeMessage extends InKeySpace {
  /** The table name the change belongs to; other tables ignore it. */
  table: string
  /** The id that changed. */
  id: Id
  /** The version of the change; a receiver applies it only if it is newer than what it holds. */
  version: number
  /** What happened to the id at the source. */
  kind: 'put' | 'invalidate'
  /** The publishing table instance; a table ignores its own messages. */
  origin: string
}

/**
 * The holder of an id's lease filled it: L2 holds its answer at `version`. Not a change: receivers
 * waiting on that lease read L2 now; nobody drops a row.
 */
export interface FillMessage extends InKeySpace {
  table: string
  id: Id
  version: number
  kind: 'fill'
  origin: string
}

/**
 * The holder of an id's lease ended its flight without a fill (its loader failed, its L2 write
 * failed, or it was released): receivers waiting on that lease give back `lease` (the holder's
 * token, compare-and-delete: its own release may have been lost) and one of them takes it over.
 * With `failed` (its loader threw or rejected), the waiters fail with it instead, as the waiters of
 * a flight in one process do (the fail-safe answers their callers where there is a graced value),
 * and a receiver with grace holds its graced row of the id off for its `graceBackoff`.
 */
export interface UnfilledMessage extends InKeySpace {
  table: string
  id: Id
  version: number
  kind: 'unfilled'
  origin: string
  /** The holder's lease token. */
  lease: string
  /** Present (`true`) when the holder's loader failed; absent when its write failed or it was released. */
  failed?: true
}

/**
 * The whole table was cleared at the source (`table.clear()`): receivers drop every row and fence
 * every flight. With `scope`, only that namespace was (`table.namespace(name).clear()`): its mark
 * got `version`, so its rows are stale and its flights fenced (a receiver that does not know
 * `scope` clears the whole table, which is safe).
 */
export interface ClearMessage extends InKeySpace {
  table: string
  kind: 'clear'
  origin: string
  /** The namespace path cleared; absent for the whole table. */
  scope?: string[]
  /** With `scope`: the version its mark got. */
  version?: number
  /**
   * Present (`true`) when the publisher's L2 took the clear: with `scope`, it minted `version`, so the
   * store of its key space (`space`) holds it; without, it moved to a new generation, so no entry of
   * that store from before the clear is read again.
   */
  taken?: true
}

/** A tag was invalidated at the source (`invalidateTags`) in the namespace path `scope` (`[]`: the base table): it got `version`. */
export interface TagMessage extends InKeySpace {
  table: string
  kind: 'tag'
  tag: string
  scope: string[]
  version: number
  origin: string
  /** Present (`true`) when the publisher's L2 minted `version`, so the store of its key space (`space`) holds it. */
  taken?: true
}

/**
 * One coherence message: a change of one id, a clear of the whole table (or of a namespace), a tag's
 * invalidation, or a lease holder's fill (or its end without one).
 * Wire format (Redis pub/sub and any other transport): this object as JSON.
 */
export type CoherenceMessage = ChangeMessage | ClearMessage | TagMessage | FillMessage | UnfilledMessage

/** What a subscriber receives: a message, a decoding failure (counted `coh_invalid`), a message of another key space (counted `coh_foreign`), or a gap. */
export type BusDelivery =
  | { type: 'message'; message: CoherenceMessage }
  | { type: 'invalid'; reason: string }
  /** A valid message published in another key space (another `namespace`) on the same channel: ignored. */
  | { type: 'foreign'; namespace: string }
  /** Messages may have been lost (the subscriber connection dropped and came back). */
  | { type: 'gap' }

/**
 * The coherence bus contract. Transports are at-most-once; a transport that can lose messages
 * reports a `gap` after it reconnects, so tables drop their L1 rows.
 */
export interface Bus {
  /** Sends the message to every subscriber of this bus (in every process sharing the transport). */
  publish(message: CoherenceMessage): Promise<void>
  /** Registers a handler; returns the function that unregisters it. Never throws into the transport. */
  subscribe(handler: (delivery: BusDelivery) => void): () => void
  /** Leaves the transport and releases connections the bus opened itself. Idempotent. */
  close(): Promise<void>
}
