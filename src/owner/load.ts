import type { Clock } from '../core/clock.js'
import type { Id } from '../core/id.js'
import type { Expiry } from '../rows/expiry.js'
import { type L2Facade, L2_FAILED } from '../l2/facade.js'
import type { L2Entry } from '../l2/store.js'
import { l2Write } from '../l2/write.js'
import type { LeaseSettings } from '../table/options.js'
import type { Fallback, Flight, FlightResult } from './flight.js'
import { giveBack, takeLeaseOrWait } from './lease.js'
import type { Loader } from './loader.js'
import { type Message, msg } from './messages.js'

/** What a flight's runner needs from its table. */
export interface RunnerDeps<V> {
  clock: Clock
  expiry: Expiry
  l2: L2Facade | undefined
  /** Ms an L2 entry is kept past its row's expiry (the table's `grace`). */
  grace: number
  /** The table's lease settings, when it has `lease` on (and an L2). */
  lease: LeaseSettings | undefined
  /**
   * The id whose loader runs right now, synchronously, on this table: a fetch of that id from inside
   * the loader would wait on its own load. Written only by {@link callLoader}, around the loader's
   * synchronous part; read by `Owner.insideLoaderOf`.
   */
  readonly loading: { id: Id | undefined }
  /** Tells the other processes that this process, holding the lease of `id`, filled it at `version` (a bus message; nothing without a bus). */
  announceFill(id: Id, version: number): void
  /** Posts a message to the owner's mailbox. */
  post(message: Message<V>): void
}

/**
 * Runs one flight's load to its result: L2 first (an entry no older than the flight's version and
 * not past its logical lifetime answers, with its remaining lifetime; a forced refresh skips this);
 * with a lease, the id's lease next (see `lease.ts`: this flight may answer from another process's
 * fill instead of loading); else the loader, whose answer is written back to L2 (version-guarded)
 * with the row's own expiry and the table's grace. A plain async function that never rejects: a
 * loader that throws synchronously, rejects or returns a non-promise all become a
 * {@link FlightResult}, posted to the owner; every L2 failure is a miss. A graced L2 entry (past its
 * logical lifetime, within its grace) is no answer, but travels with a failure as the fail-safe's
 * fallback. It reads the flight, never writes it (but for `leaseWake`); a flight the owner released
 * before its loader was due is left alone (its loader is not called); a result that arrives after
 * its release is posted, and dropped by the owner.
 *
 * When L2 answered the read, the write-back is awaited, so another process that misses once this
 * flight has answered finds the value in L2 (and a lease holder announces its fill only then). When
 * L2 was down for the read (error, timeout, open breaker), the write-back is not awaited, so a fetch
 * costs at most one L2 timeout plus the loader; a refusal then arrives later, as its own message.
 */
export async function runFlight<V>(flight: Flight<V>, loader: Loader<V, Id>, deps: RunnerDeps<V>): Promise<void> {
  const { clock, expiry, l2, post } = deps
  let result: FlightResult<V>
  let fallback: Fallback<V> | undefined
  let lease: string | undefined // the token of the lease this flight holds, if it does
  try {
    let version = flight.version
    let l2Answered = false
    if (l2 !== undefined && !flight.forced) {
      const entry = await l2.get(flight.id)
      l2Answered = entry !== L2_FAILED
      if (entry !== undefined && entry !== L2_FAILED && entry.version >= version) {
        if (entry.kind === 'tombstone') version = entry.version
        else if (entry.ttl > 0) return post(msg.flightDone(flight, fromL2<V>(entry, clock)))
        else fallback = { value: entryValue<V>(entry), expiresAt: clock.now() + entry.ttl, version: entry.version }
      }
      if (l2Answered && deps.lease !== undefined && flight.running) {
        const outcome = await takeLeaseOrWait(flight, { clock, l2, lease: deps.lease, count: (counter) => post(msg.count(counter)) }, version)
        if (outcome.kind === 'gone') return
        if (outcome.kind === 'filled') return post(msg.flightDone(flight, fromL2<V>(outcome.entry, clock)))
        if (outcome.kind === 'hold') lease = outcome.token
        else version = outcome.version
      }
    }
    if (!flight.running) return // released (abandoned, or past its bound) before its loader was due
    post(msg.load(flight.id))
    const value = await callLoader(flight, loader, deps)
    const expiresAt = expiry.draw(value, clock.now(), flight.context.lifetime)
    result = { ok: true, value, source: 'loader', expiresAt, version: flight.context.reported ?? version, refused: false }
    if (l2 !== undefined && expiresAt !== undefined && flight.running && !flight.fenced) {
      const written = l2.set(flight.id, l2Write.row(value, result.version, expiresAt, clock.now(), deps.grace))
      if (l2Answered) {
        result.refused = (await written) === 'refused'
        if (lease !== undefined && !result.refused) deps.announceFill(flight.id, result.version)
      } else void written.then((answer) => answer === 'refused' && post(msg.l2Refused(flight)))
    }
  } catch (error) {
    result = { ok: false, error, fallback }
  } finally {
    if (lease !== undefined) giveBack(l2!, flight.id, lease)
  }
  post(msg.flightDone(flight, result))
}

/** An L2 entry (a value or a negative row) as a flight's answer, with its remaining lifetime. */
function fromL2<V>(entry: L2Entry, clock: Clock): FlightResult<V> {
  return { ok: true, value: entryValue<V>(entry), source: 'l2', expiresAt: clock.now() + entry.ttl, version: entry.version, refused: false }
}

/** What an entry holds: its value, or `undefined` for a negative row. */
function entryValue<V>(entry: L2Entry): V | undefined {
  return entry.kind === 'value' ? (entry.value as V) : undefined
}

/** Calls the loader, marking its id as loading while its synchronous part runs (see {@link RunnerDeps.loading}). */
function callLoader<V>(flight: Flight<V>, loader: Loader<V, Id>, deps: RunnerDeps<V>): ReturnType<Loader<V, Id>> {
  const outer = deps.loading.id
  deps.loading.id = flight.id
  try {
    return loader(flight.id, flight.context)
  } finally {
    deps.loading.id = outer
  }
}
