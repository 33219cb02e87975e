import type { Id } from '../core/id.js'
import type { Fallback, Flight, FlightResult } from '../flight/flight.js'
import type { LeaseRole } from './lease.js'

/**
 * How a flight's runner reports to its owner: the runners run outside the owner actor (they call L2,
 * the lease protocol and the loader) and never build an owner message; the owner implements this
 * port (in `owner/owner.ts`) and turns each report into what it needs.
 */
export interface RunnerPort<V> {
  /**
   * A flight's loader is being called now for `id`, and how it came to load under a lease (`role`).
   * Counts the origin work at the moment it is done (`loads`, and `lease_acquired` or `lease_lost`)
   * and emits `load`, with no owner turn: these counters are the port's alone to write (see `core/counters.ts`).
   */
  loading(id: Id, role: LeaseRole | undefined): void
  /** A batch loader is being called now, once, for `ids` (with each one's lease role, in order): `batch_loads`, `batch_ids`, and each id as {@link loading}. */
  loadingBatch(ids: readonly Id[], roles: readonly (LeaseRole | undefined)[] | undefined): void
  /**
   * A loader's (or batch loader's) synchronous part starts now, its ids marked as loading: the owner
   * forgets the herd's shortcut (see `Mailbox.repeat`), so a fetch of those ids from inside the loader
   * meets the self-fetch check. Called by the one function of each kind that calls a loader.
   */
  enteringLoader(): void
  /** The flight's run ended with `result`: the flight carries it to the owner as its own message; a released flight's is dropped there. */
  done(flight: Flight<V>, result: FlightResult<V>): void
  /** The run found a graced value in L2 (`fallback`): the soft timeouts may answer it while the flight loads. */
  graced(flight: Flight<V>, fallback: Fallback<V>): void
  /** L2 refused the flight's write-back after the flight answered (L2 holds something newer): the row it stored must go. */
  refused(flight: Flight<V>): void
}
