import type { Id } from '../id.js'

/**
 * One coherence message. It carries no value: a `put` has already written L2 (version-checked)
 * before it is broadcast, and receivers drop their row and read L2 next time.
 * Wire format (Redis pub/sub and any other transport): this object as JSON.
 */
export interface CoherenceMessage {
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

/** What a subscriber receives: a message, or a decoding failure (counted `coh_invalid`), or a gap. */
export type BusDelivery =
  | { type: 'message'; message: CoherenceMessage }
  | { type: 'invalid'; reason: string }
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
