import { loadWatched, traceLoad } from '../core/channels.js'
import { LeaseHolderFailedError, showId } from '../core/errors.js'
import { checkDataVersion } from '../core/versions.js'
import type { Clock } from '../core/clock.js'
import { type Id, callerIdOf, isMarked } from '../core/id.js'
import type { Expiry } from '../rows/expiry.js'
import { type L2Answer, type L2Facade, L2_FAILED } from '../l2/facade.js'
import type { L2Entry } from '../l2/store.js'
import { l2Write } from '../l2/write.js'
import type { LeaseSettings } from '../table/options.js'
import type { Fallback, Flight, FlightResult } from '../flight/flight.js'
import { type LeaseOutcome, type LeaseRole, giveBack, leaseAfterRead, leaseToken, takeLeaseOrWait } from './lease.js'
import type { RunLoader } from '../owner/loader.js'
import { type RowTags, rowTagKeys } from '../tags/scope.js'
import type { RunnerPort } from './port.js'
import { RENEW_EVERY } from '../core/young-collections.js'

/** What a flight's runner needs from its table. */
export interface RunnerDeps<V> {
  /** The table's name (for `echostore:load`). */
  table: string
  clock: Clock
  expiry: Expiry
  l2: L2Facade | undefined
  /** Ms an L2 entry is kept past its row's expiry (the table's `grace`). */
  grace: number
  /** Ms a tombstone lives (`max(ttl, flight bound, 3 L2 timeouts)`, see `tombstoneLifeOf`): what a forced refresh whose answer is not to be cached leaves in L2. */
  tombstoneLife: number
  /** The table's lease settings, when it has `lease` on (and an L2). */
  lease: LeaseSettings | undefined
  /**
   * The id whose loader (or the ids whose batch loader) runs right now, synchronously, on this
   * table: a fetch of such an id from inside it would wait on its own load. Written only by
   * {@link callLoader} (`id`) and by the batch runner (`batch`, see `load-batch.ts`), around the
   * synchronous part of the call; read by `Owner.insideLoaderOf`.
   */
  readonly loading: { id: Id | undefined; batch: ReadonlySet<Id> | undefined }
  /** The write-backs of this table's flights still in progress (see {@link WritesInProgress}). Added to only by {@link writeBack}; waited on by the change path. */
  readonly writing: WritesInProgress
  /**
   * A birth for what a loader called now will answer: above every tag version this table knows of,
   * from its owner (its own invalidations and the bus's) or read from L2 (another process's, not yet
   * heard): each was invalidated before this load began. Reads only.
   */
  bornNow(): number
  /**
   * True while a put of `id` made here is in progress, not yet handled by the owner (see
   * `OwnerState.puts`): its entry in L2 may be the one a flight of the id read its version from. Reads only.
   */
  putting(id: Id): boolean
  /** Tells the other processes that this process, holding the lease of `id`, filled it at `version` (a bus message; nothing without a bus). */
  announceFill(id: Id, version: number): void
  /** Tells them that this process's flight, holding the lease of `id` under `token`, ended without a fill, `failed` when its loader failed (a bus message; nothing without a bus). */
  announceUnfilled(id: Id, version: number, token: string, failed: boolean): void
  /** Where the runner reports to the owner. */
  readonly port: RunnerPort<V>
}

/**
 * The write-backs of a table's flights still in progress: a clear waits for them before L2 moves,
 * so none lands in the next generation. Its set is made anew every `RENEW_EVERY` write-backs (see
 * `core/young-collections.ts`). Written only by its own methods.
 */
export class WritesInProgress {
  #writes = new Set<Promise<unknown>>()
  #untilRenew = RENEW_EVERY

  /** Adds a write-back in progress; it leaves once it settles. */
  add(write: Promise<unknown>): void {
    if (--this.#untilRenew === 0) {
      this.#untilRenew = RENEW_EVERY
      this.#writes = new Set(this.#writes)
    }
    this.#writes.add(write)
    void write.then(() => this.#writes.delete(write))
  }

  /** Resolves once every write-back in progress now has settled. */
  async settled(): Promise<void> {
    await Promise.all([...this.#writes])
  }
}

/**
 * Runs one flight's load to its result: L2 first (an entry no older than the flight's version and
 * not past its logical lifetime answers, with its remaining lifetime; never a forced refresh);
 * with a lease, the id's lease next (see `lease.ts`: this flight may answer from another process's
 * fill instead of loading); else the loader, whose answer is written back to L2 (version-guarded)
 * with the row's own expiry and the table's grace. A plain function that never throws (with an L2, an
 * async one that never rejects): a loader that throws synchronously, rejects or returns a non-promise all become a
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
export function runFlight<V>(flight: Flight<V>, loader: RunLoader<V>, deps: RunnerDeps<V>): void {
  if (deps.l2 === undefined) loadWithoutL2(flight, loader, deps)
  else void runWithL2(flight, loader, deps.l2, deps)
}

/** {@link runFlight} on a table with an L2. */
async function runWithL2<V>(flight: Flight<V>, loader: RunLoader<V>, l2: L2Facade, deps: RunnerDeps<V>): Promise<void> {
  const { port } = deps
  const run = newRun(flight)
  if (flight.forced) {
    readL2(run, await l2.get(flight.id), deps) // for the version its answer carries, and a graced fallback; never an answer
    return loadFlight(run, loader, deps)
  }
  if (deps.lease !== undefined && l2.readsWithLease) return readWithLease(run, l2, deps.lease, loader, deps)
  const answer = readL2(run, await l2.get(flight.id), deps)
  if (answer !== undefined) return port.done(flight, answer)
  if (run.l2Answered && deps.lease !== undefined && flight.running) {
    return loadAfterLease(run, takeLeaseOrWait(flight, { clock: deps.clock, l2, lease: deps.lease }, run.version), loader, deps)
  }
  return loadFlight(run, loader, deps)
}

/**
 * `runFlight`'s first read when the store reads and takes the lease in one step: the entry answers
 * as any L2 read does; else the flight holds the lease, waits for its holder, or (L2 failed) loads
 * without one. A lease taken for a flight that no longer goes on is given back at once.
 */
async function readWithLease<V>(run: FlightRun<V>, l2: L2Facade, lease: LeaseSettings, loader: RunLoader<V>, deps: RunnerDeps<V>): Promise<void> {
  const { flight } = run
  const token = leaseToken()
  const read = await l2.leaseReadOrAcquire(flight.id, token, lease.ttl, run.version)
  const answer = readL2(run, read === L2_FAILED ? L2_FAILED : read.entry, deps)
  const goesOn = answer === undefined && read !== L2_FAILED && flight.running
  if (read !== L2_FAILED && read.lease === 'taken' && !goesOn) {
    giveBack(l2, flight.id, token)
    deps.announceUnfilled(flight.id, run.version, token, false)
  }
  if (answer !== undefined) return deps.port.done(flight, answer)
  if (!goesOn) return loadFlight(run, loader, deps) // L2 failed: a local load (or nothing, once released)
  return loadAfterLease(run, leaseAfterRead(flight, { clock: deps.clock, l2, lease }, token, run.version, read.lease), loader, deps)
}

/**
 * A flight's way on once its lease step (`step`) is over: it answers from another holder's fill, or
 * takes the lease's outcome into its run (the lease it holds, or the version it loads from without
 * one) and loads. Never rejects.
 */
export async function loadAfterLease<V>(run: FlightRun<V>, step: Promise<LeaseOutcome>, loader: RunLoader<V>, deps: RunnerDeps<V>, batched = false): Promise<void> {
  const { flight } = run
  let outcome: LeaseOutcome
  try {
    outcome = await step
  } catch (error) {
    return deps.port.done(flight, { ok: false, error, fallback: run.fallback })
  }
  if (outcome.kind === 'gone') return
  if (outcome.kind === 'filled') return deps.port.done(flight, fromL2<V>(outcome.entry, deps.clock, true))
  if (outcome.kind === 'failed') return deps.port.done(flight, { ok: false, error: new LeaseHolderFailedError(deps.table, flight.id), fallback: run.fallback })
  takeOutcome(run, outcome, deps.clock.now())
  return loadFlight(run, loader, deps, batched)
}

/**
 * {@link runFlight} on a table without an L2: there is nothing to read first, no lease and no
 * write-back, so the loader is called now and its answer posted when it settles, with no async
 * function between them (each would cost a cold miss its promises and suspended frames). The same
 * messages, in the same order, as `loadFlight`. Never throws.
 */
function loadWithoutL2<V>(flight: Flight<V>, loader: RunLoader<V>, deps: RunnerDeps<V>): void {
  if (!flight.running) return // released before its loader was due
  let born: number
  let pending: ReturnType<RunLoader<V>>
  try {
    deps.port.loading(flight.id, undefined)
    born = Math.max(flight.born, deps.bornNow())
    pending = loadWatched.hasSubscribers ? traceLoad(deps.table, { id: flight.id }, () => callLoader(flight, loader, deps)) : callLoader(flight, loader, deps)
  } catch (error) {
    return deps.port.done(flight, { ok: false, error, fallback: undefined })
  }
  const { context } = flight
  Promise.resolve(pending).then(
    (value) => deps.port.done(flight, loaderResultOrFailure(flight.id, born, flight.version, value, context.lifetime, context.reported, deps, context.tags)),
    (error: unknown) => deps.port.done(flight, { ok: false, error, fallback: undefined }),
  )
}

/**
 * {@link loaderResult} on a table without L2, or the flight's failure when it throws (a version the
 * id cannot take, see `checkDataVersion`): that id fails alone, and its loader's other ids (a batch
 * call's) are answered as usual.
 */
export function loaderResultOrFailure<V>(
  id: Id,
  born: number,
  version: number,
  value: V | undefined,
  lifetime: number | undefined,
  reported: number | undefined,
  deps: RunnerDeps<V>,
  tags?: readonly string[],
): FlightResult<V> {
  try {
    return loaderResult(id, born, version, value, lifetime, reported, deps, tags)
  } catch (error) {
    return { ok: false, error, fallback: undefined }
  }
}

/** Takes a lease outcome that leads to a load into the flight's run (`now`: as it arrived): the lease it holds and how, or the version it loads from after waiting. */
export function takeOutcome<V>(run: FlightRun<V>, outcome: LeaseOutcome & { kind: 'hold' | 'load' }, now: number): void {
  if (outcome.kind === 'hold') {
    run.lease = outcome.token
    run.leaseTakenAt = now
    run.role = outcome.role
  } else {
    run.version = outcome.version
    run.role = outcome.role
  }
}

/**
 * Calls the flight's loader (unless it was released), writes its answer back and posts the result;
 * gives its lease back, if it holds one. `batched`: the loader is a batch loader asked for this id
 * alone (counted as a batch call). Never rejects.
 */
async function loadFlight<V>(run: FlightRun<V>, loader: RunLoader<V>, deps: RunnerDeps<V>, batched = false): Promise<void> {
  const { flight } = run
  let result: FlightResult<V>
  let stopListening: (() => void) | undefined
  try {
    if (!flight.running) return // released (abandoned, or past its bound) before its loader was due
    if (batched) deps.port.loadingBatch([flight.id], [run.role])
    else deps.port.loading(flight.id, run.role)
    run.born = Math.max(run.born, deps.bornNow())
    if (run.lease !== undefined) stopListening = endLeaseOnRelease(run, deps)
    const value = await traceLoad(deps.table, { id: flight.id }, () => callLoader(flight, loader, deps))
    // From here the write-back ends the lease (with the fill, or after it): a release now does not.
    stopListening?.()
    stopListening = undefined
    result = await writeBack(run, value, flight.context.lifetime, flight.context.reported, deps, flight.context.tags)
  } catch (error) {
    // A released flight's loader that rejects was aborted (or is nobody's): the origin did not fail.
    run.failed = flight.running
    result = { ok: false, error, fallback: run.fallback }
  } finally {
    stopListening?.()
    endLease(run, deps)
  }
  deps.port.done(flight, result)
}

/**
 * While its loader runs, a lease holder's flight that is released (its last caller left, or its
 * bound passed: its loader's signal aborts), or that a change fences, ends its lease at once, as
 * {@link endLease} does: it will write no fill, so the other processes waiting on the lease take
 * over now rather than when a loader that ignores its signal returns. Answers the function that
 * stops listening.
 */
export function endLeaseOnRelease<V>(run: FlightRun<V>, deps: RunnerDeps<V>): () => void {
  const { flight } = run
  const { signal } = flight.context
  const end = () => endLease(run, deps)
  signal.addEventListener('abort', end, { once: true })
  // A change that fences it ends the lease too: its answer will fill nothing (see `Flight.leaseHeld`).
  flight.leaseHeld = end
  return () => {
    signal.removeEventListener('abort', end)
    flight.leaseHeld = undefined
  }
}

/**
 * The flight is done with the lease it holds, if it does: given back, and, without a fill (failed,
 * released, its write lost or refused), said so, so the waiters take over now (or, when its loader
 * failed, fail with it).
 */
export function endLease<V>(run: FlightRun<V>, deps: RunnerDeps<V>): void {
  if (run.lease === undefined) return
  const l2 = deps.l2!
  // Well within its ttl (less an L2 call's bound, the most the lease can have been taken before it
  // was heard of), a lease no change voided is this flight's alone (one taken over is one that ran
  // out): it ends with a plain DEL, without reading the token first.
  const surelyOwn = !run.flight.fenced && deps.clock.now() - run.leaseTakenAt < deps.lease!.ttl / 2 - l2.timeout
  if (!run.released) surelyOwn ? void l2.leaseVoid(run.flight.id) : giveBack(l2, run.flight.id, run.lease)
  if (!run.filled) deps.announceUnfilled(run.flight.id, run.version, run.lease, run.failed)
  run.lease = undefined
}

/** What a runner knows of one flight on its way: the version it loads from, what L2 said, the lease it holds. */
export interface FlightRun<V> {
  readonly flight: Flight<V>
  /** The highest version known: the flight's, raised by a newer tombstone in L2. */
  version: number
  /** True when L2 answered the read (a hit, a miss or a tombstone; not a failure). */
  l2Answered: boolean
  /** A graced value found in L2 on the way, for the fail-safe. */
  fallback: Fallback<V> | undefined
  /** The token of the lease this flight holds, if it does. */
  lease: string | undefined
  /** When it took that lease, on the table's clock (as the answer that gave it arrived). */
  leaseTakenAt: number
  /** How it came to hold the lease, or to load without it after waiting (counted with its load). */
  role: LeaseRole | undefined
  /** Set once this flight's fill is in L2 and announced. */
  filled: boolean
  /** Set when its loader threw or rejected while the flight still ran (told to the lease's waiters). */
  failed: boolean
  /** Set when the write of this flight's answer gave its lease back in the same step. */
  released: boolean
  /** The birth of its answer, if it has tags: the flight's, raised to {@link RunnerDeps.bornNow} as its loader is called. */
  born: number
}

/** A flight's run before anything was read. */
export function newRun<V>(flight: Flight<V>): FlightRun<V> {
  return {
    flight,
    version: flight.version,
    l2Answered: false,
    fallback: undefined,
    lease: undefined,
    leaseTakenAt: 0,
    role: undefined,
    filled: false,
    failed: false,
    released: false,
    born: flight.born,
  }
}

/**
 * What L2's answer to a flight's read means: a live entry no older than what the flight knows is its
 * answer (returned); else a newer entry raises its version (see {@link versionFrom}), and a graced
 * one becomes its fallback. A forced refresh (through a loader or a batch loader) is answered by its
 * loader, never by L2: it takes the version its answer must carry, and a graced entry as the fallback
 * of the unforced callers who join it (never its own: see `Flight.forcedWaiting`). Its write-back is
 * not awaited (`l2Answered` stays false): a forced refresh that joins the flight then must not get an
 * answer its loader gave before it asked, and it takes no lease.
 */
export function readL2<V>(run: FlightRun<V>, entry: L2Answer<L2Entry | undefined>, { clock, port }: RunnerDeps<V>): FlightResult<V> | undefined {
  const { forced } = run.flight
  if (!forced) run.l2Answered = entry !== L2_FAILED
  if (!versionFrom(run, entry) || entry === undefined || entry === L2_FAILED || entry.kind === 'tombstone') return undefined
  if (entry.ttl > 0) return forced ? undefined : fromL2<V>(entry, clock)
  run.fallback = { value: entryValue<V>(entry), expiresAt: clock.now() + entry.ttl, version: entry.version, tags: entryTags(entry) }
  port.graced(run.flight, run.fallback) // the soft timeouts may answer it while the flight loads
  return undefined
}

/**
 * A load's version, from what L2 answered its read: the entry's when that is newer than what the
 * flight knew, whatever the entry holds (a tombstone, a graced value, or, for a forced refresh, a
 * live one), so that the load's write-back is not refused by the entry it replaces and its answer is
 * not older than anything any layer holds. True when L2 held an entry no older than the run's version.
 */
function versionFrom<V>(run: FlightRun<V>, entry: L2Answer<L2Entry | undefined>): boolean {
  if (entry === undefined || entry === L2_FAILED || entry.version < run.version) return false
  run.version = entry.version
  return true
}

/**
 * The loader's answer `value` for `id` (with the lifetime, version and tags it reported) as the
 * flight's result, with the row's expiry drawn now; `version` is the run's (the answer's unless the
 * loader reported one: refused below a minted version the run knows, see `checkDataVersion`), and a
 * row with tags (or of a namespace) is `born` when its loader was called.
 */
export function loaderResult<V>(
  id: Id,
  born: number,
  version: number,
  value: V | undefined,
  lifetime: number | undefined,
  reported: number | undefined,
  { clock, expiry }: RunnerDeps<V>,
  tags?: readonly string[],
): FlightResult<V> & { ok: true } {
  const answered = reported === undefined ? version : checkDataVersion(reported, version, `the loader of ${showId(callerIdOf(id))}: setVersion`)
  const expiresAt = expiry.draw(value, clock.now(), lifetime)
  // A base table's row without tags carries no tag keys (see `rowTagKeys`): its common load asks nothing more.
  const keys = tags === undefined && !isMarked(id) ? undefined : rowTagKeys(id, tags)
  const rowTags: RowTags | undefined = keys === undefined ? undefined : { keys, born }
  return { ok: true, value, source: 'loader', expiresAt, version: answered, refused: false, tags: rowTags }
}

/**
 * The loader's answer `value` (with the lifetime and version it reported) as the flight's result,
 * written back to L2 (version-guarded) with the row's own expiry and the table's grace: awaited when
 * L2 answered the read (a lease holder then announces its fill), else left to report a refusal later.
 */
export async function writeBack<V>(
  run: FlightRun<V>,
  value: V | undefined,
  lifetime: number | undefined,
  reported: number | undefined,
  deps: RunnerDeps<V>,
  tags?: readonly string[],
): Promise<FlightResult<V>> {
  const { clock, l2, port } = deps
  const { flight } = run
  const result = loaderResult(flight.id, run.born, run.version, value, lifetime, reported, deps, tags)
  const { expiresAt } = result
  // Nothing is written back for a flight a change fenced, nor, while a put of its id is in progress
  // here, at a version no newer than the one its run read: that put's entry may be the one it read
  // its version from (a forced refresh takes the version of a newer entry), and an equal version
  // would be written over it. Once the owner has handled the put, it is no longer in progress (an
  // applied put has fenced this flight). An answer the loader gave a newer version (`setVersion`) is
  // written: L2's guard orders it with the put.
  if (l2 === undefined || !flight.running || flight.fenced || (result.version <= run.version && deps.putting(flight.id))) return result
  // An answer not to be cached (`negativeTtl` 0, `setTtl(0)`) writes nothing, but where it replaces
  // an entry: a forced refresh's live one, or the graced one this run read (the fail-safe would
  // answer it again, here or in a process that reads it from L2). That entry gives way to a
  // tombstone, as a put's with a `ttl` of 0 does.
  if (expiresAt === undefined && !flight.forced && run.fallback === undefined) return result
  const release = run.lease !== undefined && l2.releasesWithSet ? run.lease : undefined
  const entry =
    expiresAt === undefined ? l2Write.tombstone(result.version, deps.tombstoneLife) : l2Write.row(value, result.version, expiresAt, clock.now(), deps.grace, deps.tombstoneLife, result.tags)
  const written = l2.set(flight.id, entry, release)
  deps.writing.add(written)
  if (run.l2Answered) {
    const answer = await written
    result.refused = answer === 'refused'
    run.released = release !== undefined && (answer === 'written' || answer === 'refused')
    // A fill is announced only when it is in L2 and still this flight's to give (not fenced by a change or a clear).
    run.filled = run.lease !== undefined && answer === 'written' && flight.running && !flight.fenced
    if (run.filled) deps.announceFill(flight.id, result.version)
  } else void written.then((answer) => answer === 'refused' && port.refused(flight))
  return result
}

/** An L2 entry (a value or a negative row) as a flight's answer, with its remaining lifetime; `leaseWaited` when it is a lease fill waited for. */
export function fromL2<V>(entry: L2Entry, clock: Clock, leaseWaited = false): FlightResult<V> {
  const result: FlightResult<V> = { ok: true, value: entryValue<V>(entry), source: 'l2', expiresAt: clock.now() + entry.ttl, version: entry.version, refused: false, tags: entryTags(entry) }
  if (leaseWaited) result.leaseWaited = true
  return result
}

/** The tag keys (and namespace marks) an entry carries and its birth, as its row keeps them; `undefined` for none. */
function entryTags(entry: L2Entry): RowTags | undefined {
  return entry.tags === undefined ? undefined : { keys: entry.tags, born: entry.born ?? 0 }
}

/** What an entry holds: its value, or `undefined` for a negative row. */
function entryValue<V>(entry: L2Entry): V | undefined {
  return entry.kind === 'value' ? (entry.value as V) : undefined
}

/** Calls the loader, marking its id as loading while its synchronous part runs (see {@link RunnerDeps.loading}). */
function callLoader<V>(flight: Flight<V>, loader: RunLoader<V>, deps: RunnerDeps<V>): ReturnType<RunLoader<V>> {
  const outer = deps.loading.id
  deps.loading.id = flight.id
  deps.port.enteringLoader()
  try {
    return loader(flight.id, flight.context)
  } finally {
    deps.loading.id = outer
  }
}
