import type { Emitter } from 'mitt'
import { C } from '../core/counters.js'
import { type TableEvents, emitSafely } from '../core/events.js'
import type { Id } from '../core/id.js'
import type { Fallback, Flight, FlightResult } from '../flight/flight.js'
import type { LeaseRole } from '../runner/lease.js'
import type { RunnerPort } from '../runner/port.js'
import { type Message, msg } from './messages.js'

/**
 * The owner's side of its runners' port: a result travels as the flight itself (one message, no
 * object made for it), a graced L2 entry and a late L2 refusal as messages; the loader's call is
 * counted here, as it happens, with no owner turn. The origin-work counters (`loads`, `batch_loads`,
 * `batch_ids`, `lease_acquired`, `lease_lost`) are written only by {@link loading} and
 * {@link loadingBatch}, every other owner counter only by the transition.
 */
export class OwnerPort<V> implements RunnerPort<V> {
  constructor(
    private readonly table: string,
    /** The owner's counters: this port writes only the origin-work cells. */
    private readonly counters: Float64Array,
    private readonly events: Emitter<TableEvents>,
    /** Posts a message to the owner's mailbox. */
    private readonly post: (message: Message<V>) => void,
  ) {}

  loading(id: Id, role: LeaseRole | undefined): void {
    const counters = this.counters
    counters[C.loads]++
    // Counted with the load it led to, so lease_acquired + lease_lost ≤ loads whatever happens to the flight.
    if (role !== undefined) counters[C[role]]++
    if (this.events.all.size > 0) emitSafely(this.events, 'load', { table: this.table, id })
  }

  loadingBatch(ids: readonly Id[], roles: readonly (LeaseRole | undefined)[] | undefined): void {
    this.counters[C.batch_loads]++
    this.counters[C.batch_ids] += ids.length
    ids.forEach((id, i) => this.loading(id, roles?.[i]))
  }

  done(flight: Flight<V>, result: FlightResult<V>): void {
    flight.result = result
    this.post(flight)
  }

  graced(flight: Flight<V>, fallback: Fallback<V>): void {
    this.post(msg.l2Graced(flight, fallback))
  }

  refused(flight: Flight<V>): void {
    this.post(msg.l2Refused(flight))
  }
}
