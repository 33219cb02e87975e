import type { Emitter } from 'mitt'
import type { Clock } from '../core/clock.js'
import { newOwnerCounters } from '../core/counters.js'
import type { Id } from '../core/id.js'
import { RowStore, type SweepCursor } from '../rows/row-store.js'
import { TagVersions } from '../tags/tag-versions.js'
import { VersionClock } from '../core/versions.js'
import type { Sweeper } from './sweep-timer.js'
import type { BatchWindow } from '../runner/batch-window.js'
import type { TableEvents } from '../core/events.js'
import { Flights } from './flights.js'
import type { Flight } from '../flight/flight.js'
import type { Message, PutInProgress } from './messages.js'
import type { RunnerDeps } from '../runner/run.js'

/**
 * The owner's working state, held by its actor logic (see `logic.ts`). Every field is written only
 * by the owner's transition, with the exceptions its fields name: the rows' visited bits (set by the
 * hit path, see `RowStore`), and inside a flight what its runner and loader write (see `Flight`).
 * The hit path reads `rows`, the mailbox reads `flights` (its joinable ones) and `coalesce` to join a plain miss to a
 * flight, and `stats()` reads `counters`, `rows.size`, `rows.weight` and `flights.running`.
 */
export interface OwnerState<V> {
  /** The rows. */
  readonly rows: RowStore<V>
  /** The tag versions the rows are checked against (see `tags/tag-versions.ts`). */
  readonly tags: TagVersions
  /** The version clock births and tag invalidations are read from (see `VersionClock`). */
  readonly versions: VersionClock
  /** The running flights, joinable and solo, their deadlines and fences (see `flights.ts`). */
  readonly flights: Flights<V>
  /**
   * The puts in progress by id (`table.put`, from before it asks L2 until the owner handled its
   * outcome): a change heard meanwhile, a clear or a bus gap fences them, as it fences a flight. An
   * entry lives only while a put of its id is in progress.
   */
  readonly puts: Map<Id, Set<PutInProgress>>
  /**
   * This table's changes (puts, invalidates) whose L2 write failed, by id: the version, kept until
   * no older entry of the id L2 may still hold is left (`forgetAt`), whatever becomes of the id's row
   * or tombstone meanwhile (swept, evicted, or none stored on a full table), so that this process
   * never reads back what its change replaced (see `known`). Written by the owner's change handlers
   * (`rememberMissedByL2`), pruned by the sweeper's tick, emptied by a clear L2 took (see `onClear`).
   */
  readonly missedByL2: Map<Id, { version: number; forgetAt: number }>
  /** The owner's counters (see `counters.ts`). */
  readonly counters: Float64Array
  /**
   * Rows written so far by flights that were not joinable (solo flights, started with the gate off),
   * their fills and their fail-safe's: the only writes of an id's row that do not fence the id's
   * joinable flight first (see `Flight.slot`).
   */
  soloFills: number
  /** The coalescing gate. */
  coalesce: boolean
  /** The sweep pass walking the rows now, if any. */
  sweep: SweepCursor | undefined
  /** The earliest time the next sweep pass may start. */
  nextSweepAt: number
  /** The shards the last pass put off, wholly reclaimable by the next tick, which walks them alone (see `onSweep`). */
  putOff: number[]
}

/** What the owner works with besides its state: set at construction, never written (but for `runner.loading`, see `RunnerDeps.loading`, and `batchWindow`). */
export interface OwnerEnv<V> {
  readonly name: string
  /** This table instance's id on the bus: it ignores its own messages. */
  readonly origin: string
  /** The key space of the table's L2 (`L2Store.keySpace`): it ignores messages carrying another. `undefined`: it has none, and applies every message. */
  readonly space: string | undefined
  readonly clock: Clock
  readonly loadTimeout: number
  /** How long a flight may run before `LoadTimeoutError`: `loadTimeout`, plus, with a lease, its `wait` and five L2 timeouts (`LEASE_L2_CALLS`; a flight may wait for another process's load before its own). */
  readonly flightBound: number
  /** How long a tombstone is remembered: long enough to outlive any flight or row it fences, and an older put's L2 write (see `tombstoneLifeOf`). */
  readonly tombstoneLife: number
  /** Least time between the starts of two sweep passes: `max(sweepInterval, ttl / 16)`. */
  readonly sweepPeriod: number
  /** Ms between sweeper ticks. */
  readonly sweepInterval: number
  /** Ms a row's value is kept past its expiry as a fallback (0: no grace, no fail-safe). */
  readonly grace: number
  /** Weighs a value for `maxSize` (undefined: the table has none): called for every value written to the rows. */
  readonly sizeOf: ((value: V, id: Id) => unknown) | undefined
  /**
   * With an L2, the longest an entry written with the table's lifetimes stays there after its birth
   * (`max(ttl, negativeTtl)` with its jitter, plus the grace); 0 without one. A tag version this recent
   * is kept even when no row holds it: such an entry in L2 may be older than it (see `forgetTagVersions`).
   */
  readonly l2EntryLife: number
  /** Ms the fail-safe keeps the origin from being tried again after a failure it absorbed. */
  readonly graceBackoff: number
  /** Ms after which the waiters of a flight get the graced value, if there is one (undefined: never). */
  readonly softTimeout: number | undefined
  readonly sweeper: Sweeper
  readonly events: Emitter<TableEvents>
  /** True once the table was closed: the owner stops once no flight runs (the one closing flag: see `Owner.close`). */
  readonly closing: () => boolean
  /** What a flight's runner needs (its `post` is the mailbox's). */
  readonly runner: RunnerDeps<V>
  /** Where the flights started with a batch loader wait for their call (it has state of its own: see `batch-window.ts`). */
  readonly batchWindow: BatchWindow<V>
  /** Posts a message and hands the turn's messages to the owner now: for timers and listeners, which run outside any turn. */
  readonly send: (message: Message<V>) => void
}

/** One transition's view: the state, the environment, the effects to run once it commits, and the flights it started. */
export interface Turn<V> {
  readonly state: OwnerState<V>
  readonly env: OwnerEnv<V>
  /** True while someone listens to the table's events, as the transition began (nothing is built for them otherwise). */
  readonly listening: boolean
  /** Runs `effect` after the transition commits (xstate's `defer`). */
  readonly defer: (effect: () => void) => void
  /** Flights started in this transition (each carries its origin): their runners start as one effect. */
  readonly started: Flight<V>[]
}

/** The state of a new owner. */
export function initialState<V>(capacity: number, grace: number, coalesce: boolean, clock: Clock, deadlineDue: () => void, maxSize?: number): OwnerState<V> {
  const tags = new TagVersions()
  return {
    rows: new RowStore<V>(capacity, grace, tags, maxSize),
    tags,
    versions: new VersionClock(),
    flights: new Flights<V>(clock, deadlineDue),
    puts: new Map(),
    missedByL2: new Map(),
    counters: newOwnerCounters(),
    soloFills: 0,
    coalesce,
    sweep: undefined,
    nextSweepAt: 0,
    putOff: [],
  }
}
