/**
 * A flight's side of a table's `lease` option: one load per id across every process sharing the L2.
 * A flight that missed L2 asks for the id's lease. The holder reads L2 once more (a holder that
 * filled and let go a moment ago is not loaded after), then loads for everyone; when its answer is
 * in L2 it announces the fill on the bus and gives the lease back; when its flight ends without a
 * fill (its loader failed, its write failed, it was released) it gives the lease back and says so
 * (an `unfilled` message naming its lease), so that a waiter takes over at once, even when that
 * release was lost. A flight that finds the lease held waits for that fill: it looks at L2 again
 * when the bus tells it (or a change of the id arrives), and otherwise on its own, after 2 ms, then
 * twice as long each time up to 50 ms; with a bus, whose messages wake it, after 25 ms first (its
 * own looks then only cover a lost message or a dead holder, and cost Redis work on every wait). On
 * each look it also tries to take the lease, so when the holder died (its lease expired) or gave
 * up, one waiter takes over, also a waiter whose `wait` has just run out; but when the holder's
 * loader failed, the waiters take that failure as their own instead, as the waiters of a flight in
 * one process do (one load per herd, and its one answer: asking the origin once more from every
 * process would only add load where it fails). Past `wait`, a waiter that cannot take the lease
 * loads itself. L2 failing at any step means a local load: a lease never fails a fetch, and its L2
 * calls are inside the flight's bound
 * (see `LEASE_L2_CALLS`). A batch asks for the leases of all its ids in one call (`askLeases`); each
 * id it finds held elsewhere waits on its own, as a single flight does.
 *
 * Runs in the flight's runner, outside the owner: it reads the flight and writes only
 * `flight.leaseWake` (the owner calls it). What it did is counted by the owner, from the outcome the
 * runner reports with the flight's load or result (`lease_acquired`, `lease_lost`, `lease_waited`).
 */
import { randomUUID } from '../core/random-uuid.js'
import type { Clock } from '../core/clock.js'
import { type L2Answer, type L2Facade, L2_FAILED } from '../l2/facade.js'
import type { Id } from '../core/id.js'
import type { L2Entry, LeaseRead } from '../l2/store.js'
import type { LeaseSettings } from '../table/options.js'
import type { Flight, HolderEnd } from '../flight/flight.js'

/** The longest pause between two looks, in ms. */
const LONGEST_LOOK_MS = 50

/** How a flight that loads came to load: as the lease's first holder, or after waiting on another (taken over or not). */
export type LeaseRole = 'lease_acquired' | 'lease_lost'

/** What a flight does after asking for the lease. */
export type LeaseOutcome =
  /** It holds the lease (`token`): it loads, writes L2, announces the fill (or that there is none), then gives the lease back. */
  | { kind: 'hold'; token: string; role: LeaseRole }
  /** Another holder filled the id: the flight answers from this entry (`lease_waited`). */
  | { kind: 'filled'; entry: L2Entry }
  /**
   * It loads without the lease, from `version` (L2 failed, or the wait ended; a newer tombstone may
   * have raised it); `role` is `lease_lost` when it waited on another holder first, `undefined` when
   * its first ask failed (L2 down: a local load, as without the option).
   */
  | { kind: 'load'; version: number; role: 'lease_lost' | undefined }
  /** The flight was released while it waited: nothing more to do. */
  | { kind: 'gone' }
  /** The holder's loader failed: the flight fails with it, without calling the origin (its callers get a graced value where there is one: the fail-safe). */
  | { kind: 'failed' }

/** What the lease protocol needs from the flight's table. */
export interface LeaseDeps {
  clock: Clock
  l2: L2Facade
  lease: LeaseSettings
}

/**
 * Asks for the lease of `flight.id`, then holds it, or waits for its holder's fill (see the module
 * comment). `version` is the highest version the flight knows of; an entry below it is no fill.
 */
export async function takeLeaseOrWait<V>(flight: Flight<V>, deps: LeaseDeps, version: number): Promise<LeaseOutcome> {
  const token = leaseToken()
  const first = await deps.l2.leaseAcquire(flight.id, token, deps.lease.ttl)
  if (first === L2_FAILED) return { kind: 'load', version, role: undefined }
  if (first) return taken(flight, deps, token, version, 'lease_acquired', await deps.l2.get(flight.id))
  return waitForLease(flight, deps, token, version)
}

/** A token for a flight's (or a batch's) lease: random, so no two holders share one. */
export function leaseToken(): string {
  return randomUUID()
}

/**
 * The lease step after a store read the id and asked for its lease in one step (`readOrAcquire`)
 * and found no fill: `taken` holds it; `busy` waits for its holder; `unasked` (the store saw a fill
 * this flight cannot answer with, such as an entry it could not decode) asks again as
 * {@link takeLeaseOrWait} does.
 */
export function leaseAfterRead<V>(flight: Flight<V>, deps: LeaseDeps, token: string, version: number, lease: LeaseRead['lease']): Promise<LeaseOutcome> {
  if (lease === 'taken') return Promise.resolve({ kind: 'hold', token, role: 'lease_acquired' })
  if (lease === 'busy') return waitForLease(flight, deps, token, version)
  return takeLeaseOrWait(flight, deps, version)
}

/** What a batch's first ask led to for one flight: its outcome now, or `wait` (another holds the lease: {@link waitForLease} next, under `token`). */
export type FirstAsk = LeaseOutcome | { kind: 'wait'; token: string }

/**
 * The first step of {@link takeLeaseOrWait} for the flights of one batch at once: their leases asked
 * for in one call under one token, and L2 read once more for the leases taken, in one call. Answers
 * in the order of `runs` (each flight with the highest version it knows of; no id twice).
 */
export async function askLeases<V>(runs: readonly { flight: Flight<V>; version: number }[], deps: LeaseDeps): Promise<FirstAsk[]> {
  const { l2, lease } = deps
  const token = leaseToken()
  const firsts = await l2.leaseAcquireMany(
    runs.map((run) => run.flight.id),
    token,
    lease.ttl,
  )
  const held = runs.filter((_, i) => firsts[i] === true)
  const entries = held.length === 0 ? [] : await l2.getMany(held.map((run) => run.flight.id))
  let next = 0
  return runs.map(({ flight, version }, i): FirstAsk => {
    const first = firsts[i]
    if (first === L2_FAILED) return { kind: 'load', version, role: undefined }
    if (first === false) return { kind: 'wait', token }
    return taken(flight, deps, token, version, 'lease_acquired', entries[next++])
  })
}

/**
 * Waits for the fill of another holder of `flight.id`'s lease, looking at L2 and asking for the
 * lease (under `token`) on each look, up to `wait` from now (see the module comment).
 */
export async function waitForLease<V>(flight: Flight<V>, deps: LeaseDeps, token: string, version: number): Promise<LeaseOutcome> {
  const { clock, l2, lease } = deps
  const deadline = clock.now() + lease.wait
  let pause = lease.firstLook
  for (;;) {
    const ended = await wakeOrPause(flight, clock, Math.min(pause, Math.max(0, deadline - clock.now())))
    if (!flight.running) return { kind: 'gone' }
    let gaveUp = ended?.lease
    // The holder's loader failed: so does this flight (unless a change fenced it: it loads afresh; a
    // forced refresh's supersession is no change), when that holder's lease is the one it waits on:
    // a holder whose lease ran out and was taken over fails alone, and this flight waits on for the
    // new holder's fill (that lease is not the failed holder's to release: the look skips it, and
    // stays within `LEASE_L2_CALLS`).
    if (ended?.failed === true && !flight.fencedByChange) {
      const another = await l2.leaseHeldByAnother(flight.id, ended.lease)
      if (!flight.running) return { kind: 'gone' }
      if (!another) return failedUnlessFilled(flight, l2, version)
      gaveUp = undefined
    }
    const looked = l2.readsWithLease ? await lookWithLease(flight, deps, token, version, gaveUp) : await look(flight, deps, token, version, gaveUp)
    if (looked !== undefined) return looked
    if (clock.now() >= deadline) return { kind: 'load', version, role: 'lease_lost' }
    pause = Math.min(2 * pause, LONGEST_LOOK_MS)
  }
}

/**
 * The lease this flight waits on ended with its holder's failure (or none is held): the flight fails
 * with it, unless L2 holds a fill by now (a holder that took over a lease that ran out may have
 * filled and let go before the failure was read).
 */
async function failedUnlessFilled<V>(flight: Flight<V>, l2: L2Facade, version: number): Promise<LeaseOutcome> {
  const entry = await l2.get(flight.id)
  if (!flight.running) return { kind: 'gone' }
  const fill = fillIn(entry, version, flight)
  return fill === undefined ? { kind: 'failed' } : { kind: 'filled', entry: fill }
}

/** One look of a waiter: L2 read, the release of a holder that said it gave up, a lease try, and a read once more if it took the lease. Undefined: wait on. */
async function look<V>(flight: Flight<V>, deps: LeaseDeps, token: string, version: number, gaveUp: string | undefined): Promise<LeaseOutcome | undefined> {
  const { l2 } = deps
  const entry = await l2.get(flight.id)
  if (!flight.running) return { kind: 'gone' }
  const seen = afterLook(flight, entry, version)
  if (seen !== undefined) return seen
  // A holder that said it gave up may have lost its release: its lease goes (compare-and-delete on its token).
  if (gaveUp !== undefined && (await l2.leaseRelease(flight.id, gaveUp)) === L2_FAILED) return { kind: 'load', version, role: 'lease_lost' }
  return tryLease(flight, deps, token, version, async () => taken(flight, deps, token, version, 'lease_lost', await l2.get(flight.id)))
}

/** A waiter's try for the lease: `onTaken` once it holds it; undefined when another holds it (wait on). */
async function tryLease<V>(flight: Flight<V>, { l2, lease }: LeaseDeps, token: string, version: number, onTaken: () => Promise<LeaseOutcome>): Promise<LeaseOutcome | undefined> {
  const again = await l2.leaseAcquire(flight.id, token, lease.ttl)
  // Released while it asked (its last waiter left, or its bound passed): it waits no more, and holds no lease.
  if (!flight.running) {
    if (again === true) giveBack(l2, flight.id, token)
    return { kind: 'gone' }
  }
  if (again === true) return onTaken()
  return again === L2_FAILED ? { kind: 'load', version, role: 'lease_lost' } : undefined
}

/** {@link look} on a store that reads and tries the lease in one step (`readOrAcquire`): no read once more is needed after taking it. */
async function lookWithLease<V>(flight: Flight<V>, deps: LeaseDeps, token: string, version: number, gaveUp: string | undefined): Promise<LeaseOutcome | undefined> {
  const { l2, lease } = deps
  if (gaveUp !== undefined && (await l2.leaseRelease(flight.id, gaveUp)) === L2_FAILED) return { kind: 'load', version, role: 'lease_lost' }
  const read = await l2.leaseReadOrAcquire(flight.id, token, lease.ttl, version)
  if (read === L2_FAILED) return { kind: 'load', version, role: 'lease_lost' }
  const seen = flight.running ? afterLook(flight, read.entry, version) : { kind: 'gone' as const }
  // The store saw a fill this flight cannot answer with (one it could not decode) and asked for no
  // lease: ask for it now, as the first read does, rather than look again at the same entry until `wait` ends.
  if (read.lease === 'unasked' && seen === undefined) return tryLease(flight, deps, token, version, async () => ({ kind: 'hold', token, role: 'lease_lost' }))
  if (read.lease !== 'taken') return seen
  if (seen === undefined) return { kind: 'hold', token, role: 'lease_lost' }
  giveBack(l2, flight.id, token) // taken for a flight that answers otherwise, or is gone
  return seen
}

/** What a waiter's look at `entry` decides: a fill answers; a newer tombstone (the lease voided by an invalidate) or a fence loads; else undefined. */
function afterLook<V>(flight: Flight<V>, entry: L2Answer<L2Entry | undefined>, version: number): LeaseOutcome | undefined {
  const fill = fillIn(entry, version, flight)
  if (fill !== undefined) return { kind: 'filled', entry: fill }
  if (entry !== L2_FAILED && entry?.kind === 'tombstone' && entry.version > version) return { kind: 'load', version: entry.version, role: 'lease_lost' }
  // A fenced flight (by a change, or superseded) never takes the lease: its answer would fill nothing.
  if (entry === L2_FAILED || flight.fenced) return { kind: 'load', version, role: 'lease_lost' }
  return undefined
}

/** `entry` when it is a fill this flight may answer with (a live value or negative row, no older than `version`, the flight not fenced by a change); else undefined. */
function fillIn<V>(entry: L2Answer<L2Entry | undefined> | undefined, version: number, flight: Flight<V>): L2Entry | undefined {
  const fill = entry !== L2_FAILED && entry !== undefined && entry.kind !== 'tombstone' && entry.version >= version && entry.ttl > 0 && !flight.fencedByChange
  return fill ? (entry as L2Entry) : undefined
}

/**
 * The flight just took the lease, and `entry` is what L2 answered when read once more: a holder that
 * filled it and let go a moment ago (after this flight's last look) must not be loaded after.
 */
function taken<V>(flight: Flight<V>, deps: LeaseDeps, token: string, version: number, role: LeaseRole, entry: L2Answer<L2Entry | undefined> | undefined): LeaseOutcome {
  const fill = fillIn(entry, version, flight)
  if (fill !== undefined) {
    giveBack(deps.l2, flight.id, token)
    return { kind: 'filled', entry: fill }
  }
  return { kind: 'hold', token, role }
}

/**
 * Resolves after `ms` on the clock, or sooner when the owner wakes the flight (a fill or a change of
 * its id, or its release); with how the holder ended, when a holder that said it gave up woke it.
 */
function wakeOrPause<V>(flight: Flight<V>, clock: Clock, ms: number): Promise<HolderEnd | undefined> {
  return new Promise((resolve) => {
    const done = (ended?: HolderEnd) => {
      clock.clearTimeout(timer)
      flight.leaseWake = undefined
      resolve(ended)
    }
    const timer = clock.setTimeout(done, ms)
    flight.leaseWake = done
  })
}

/** The holder of `id`'s lease (`token`) is done (filled, failed, or released): the lease goes back, without waiting. Never throws. */
export function giveBack(l2: L2Facade, id: Id, token: string): void {
  void l2.leaseRelease(id, token)
}
