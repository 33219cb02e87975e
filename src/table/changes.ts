/**
 * The table's change path: `put`, `invalidate` and `clear` (version, L2 write, the owner's L1
 * change, broadcast); the owner handles what the bus delivers (`owner/on-change.ts`). L2 is written first, version-guarded, so once a change has
 * reached L1 no flight can read the old entry from L2; the bus carries no value, only the version.
 */
import type { CoherenceMessage } from '../bus/bus.js'
import type { Clock } from '../core/clock.js'
import { TableClosedError, badArgument, badNumber, describe, showId } from '../core/errors.js'
import { readOptions } from './read-options.js'
import { MAX_TTL } from './options.js'
import type { Expiry } from '../rows/expiry.js'
import { type Id, callerIdOf } from '../core/id.js'
import { type L2Answer, type L2Facade, L2_FAILED, type L2WriteOutcome } from '../l2/facade.js'
import type { L2Write } from '../l2/store.js'
import { l2Write } from '../l2/write.js'
import { known } from '../owner/row-writes.js'
import { type ChangeReply, type Message, type PutInProgress, msg } from '../owner/messages.js'
import type { Owner } from '../owner/owner.js'
import { PUBLISH_TIMEOUT, publish } from '../bus/publish.js'
import { MAX_VERSION, checkDataVersion, isVersion, mintVersion } from '../core/versions.js'
import { type RowTags, type Scope, checkTags, rowTagKeys } from '../tags/scope.js'

/** Options of `table.put` and `table.invalidate`. */
export interface ChangeOptions {
  /**
   * The version of this change: an integer in [0, 2^52] that grows with each change of the id (a row
   * version, an `updated_at` in ms). Default: a minted one, above every version known for the id: the
   * next data version when the id holds one, else no lower than the clock's millisecond × 1,024 (L2's
   * script mints it when L2 is set and answers). A version below a minted clock version the id holds
   * is refused with a `RangeError` (see `core/versions.ts`).
   */
  version?: number
}

/** Options of `table.put`: a change's, and the row's lifetime. */
export interface PutOptions extends ChangeOptions {
  /**
   * The row's lifetime in ms (in [0, a year]), replacing the table's `ttl` (or `negativeTtl`) for
   * it; jitter applies as usual, and 0 stores nothing (a tombstone in its place), as a loader's `setTtl`.
   */
  ttl?: number
  /** The row's tags (at most 64 non-empty strings), as a loader's `setTags` gives them: `invalidateTags` of any of them makes the row stale. */
  tags?: readonly string[]
}

/** What a put or invalidate did. */
export interface ChangeResult {
  /** The version the change carried (given, or assigned). */
  version: number
  /**
   * False when something newer was already known (L1 or L2), a put was fenced while it waited for L2
   * (another process's change of the id at or above its version, a clear, a bus gap), or the table
   * closed before the change reached it: the change was refused locally, but still broadcast.
   */
  applied: boolean
  /**
   * What L2 did with the change: `'written'`; `'refused'` (L2, or this table, holds a newer version); `'failed'` (an
   * error, a timeout or an open breaker: other processes may read the old entry from L2 until it
   * expires, so retry the change); `'none'` (no L2 configured).
   */
  l2: 'written' | 'refused' | 'failed' | 'none'
  /** True when the change reached the bus; false when there is no bus, or publishing failed or took longer than {@link PUBLISH_TIMEOUT}. */
  broadcast: boolean
}

/** What a clear did. */
export interface ClearResult {
  /**
   * What L2 did: `'cleared'` (no process reads an entry from before the clear again); `'failed'` (an
   * error, a timeout or an open breaker: processes may still read older entries from L2 until they
   * expire, so retry the clear); `'none'` (no L2 configured).
   */
  l2: 'cleared' | 'failed' | 'none'
  /** True when the clear reached the bus (every instance drops its rows); false when there is no bus, or publishing failed. */
  broadcast: boolean
}

/** What the change path works with: the table's own pieces. */
export interface ChangeDeps<V> {
  name: string
  origin: string
  owner: Owner<V>
  clock: Clock
  expiry: Expiry
  tombstoneLife: number
  /** Ms an L2 entry is kept past its row's expiry (the table's `grace`). */
  grace: number
  /** True when the table has `lease` on: an invalidate voids the id's lease. */
  leases: boolean
  /** True once the table is closing: changes are refused. */
  closed(): boolean
}

/** How an L2 write answered, as a {@link ChangeResult}'s `l2`. */
function l2Outcome(answer: L2Answer<L2WriteOutcome>): ChangeResult['l2'] {
  return answer === L2_FAILED ? 'failed' : answer === 'refused' ? 'refused' : 'written'
}

/** A table's puts and invalidates. */
export class Changes<V> {
  constructor(private readonly deps: ChangeDeps<V>) {}

  /** See `Table.put`. */
  async put(id: Id, value: V | undefined, options: PutOptions | undefined): Promise<ChangeResult> {
    const { clock, expiry, tombstoneLife, grace } = this.deps
    const { version: given, ttl, tags } = this.#check(id, options, 'put')
    // In progress from before L2 is asked anything (its version included) until the owner handled
    // it: a change of the id heard meanwhile (L2 may hold it already) fences it, so its older value
    // never enters L1, and leaves a tombstone its L2 write is then refused by.
    const { owner } = this.deps
    // The row's birth on the tag version clock is taken before L2 is asked anything too: a tag of the
    // row invalidated (a namespace cleared) while the put waits for its version or its write is newer than it.
    const keys = rowTagKeys(id, tags)
    const rowTags: RowTags | undefined = keys === undefined ? undefined : { keys, born: owner.state.versions.peek(clock.now()) }
    const progress: PutInProgress = { id, fencedAt: -1, born: rowTags?.born ?? Number.POSITIVE_INFINITY }
    owner.post(msg.putProgress(progress, true))
    let l2: ChangeResult['l2']
    let change: { applied: boolean; version: number }
    try {
      const version = await this.#versionOf(id, given, 'put')
      const now = clock.now()
      const expiresAt = expiry.draw(value, now, ttl)
      const tombstone = l2Write.tombstone(version, tombstoneLife)
      l2 = await this.#writeL2(id, version, expiresAt === undefined ? tombstone : l2Write.row(value, version, expiresAt, now, grace, tombstoneLife, rowTags), tombstone)
      if (l2 === 'refused' && given !== undefined) await this.#checkRefused(id, given, 'put')
      change = await this.#change((reply) => msg.put(id, value, expiresAt, version, l2 === 'refused', l2 === 'failed', rowTags, progress, reply))
    } finally {
      owner.post(msg.putProgress(progress, false))
    }
    return { applied: change.applied && l2 !== 'refused', version: change.version, l2, broadcast: await this.#broadcast(id, change.version, 'put') }
  }

  /** See `Table.invalidate`. */
  async invalidate(id: Id, options: ChangeOptions | undefined): Promise<ChangeResult> {
    const given = this.#check(id, options, 'invalidate').version
    const version = await this.#versionOf(id, given, 'invalidate')
    const tombstone = l2Write.tombstone(version, this.deps.tombstoneLife)
    const l2 = await this.#writeL2(id, version, tombstone, tombstone)
    if (l2 === 'refused' && given !== undefined) await this.#checkRefused(id, given, 'invalidate')
    // With leases, the id's lease goes too: its holder's write-back is refused by the tombstone's
    // version, and whoever waited on it loads (they see the tombstone, or the bus message).
    const leases = this.deps.leases ? this.#openL2() : undefined
    if (leases !== undefined) await leases.leaseVoid(id)
    const change = await this.#change((reply) => msg.invalidate(id, version, l2 === 'failed', reply))
    return { applied: change.applied && l2 !== 'refused', version: change.version, l2, broadcast: await this.#broadcast(id, change.version, 'invalidate') }
  }

  /**
   * See `Table.clear`. L2 moves first, then L1: a flight that read L2 before the clear is fenced when
   * the owner drops the rows, and one that starts afterwards reads the new generation.
   */
  async clear(): Promise<ClearResult> {
    const { owner, name, closed } = this.deps
    if (closed()) throw new TableClosedError(name, undefined, 'clear')
    let cleared: 'cleared' | 'none' | typeof L2_FAILED = 'none'
    if (owner.l2 !== undefined) {
      // Flights in progress are fenced before L2 moves (one answering in between must not write into
      // the next generation), and again with the rows (one started in between read the old one).
      await new Promise<void>((resolve) => owner.send(msg.fence(resolve)))
      // A write-back already on its way must land before L2 moves (and be cleared), not after it.
      await owner.writesSettled()
      const l2 = this.#openL2()
      cleared = l2 === undefined ? L2_FAILED : await l2.clear()
      // Closed meanwhile (L2 is then not asked, see `#openL2`; or it closed while L2 moved): the clear
      // goes no further, since a stopped owner keeps the rows, and settles as one whose L2 failed, unbroadcast.
      if (closed()) return { l2: 'failed', broadcast: false }
    }
    // Without L2 the rows go in the turn of the call, which found the table open: a clear made
    // before `close()` reaches the owner before it stops (a stopped owner would only answer it).
    const moved = cleared === 'cleared'
    await new Promise<void>((resolve) => owner.send(msg.clear(moved, resolve)))
    const broadcast = await this.#publish(undefined, { table: name, kind: 'clear', origin: this.deps.origin, ...(moved ? { taken: true as const } : {}) })
    return { l2: cleared === L2_FAILED ? 'failed' : cleared, broadcast }
  }

  /**
   * See `Table.invalidateTags`: each tag of `scope` gets a new version (minted by L2's script when
   * L2 answers, so every process reads it there), the owner applies them (rows carrying one go
   * stale, flights in the scope are fenced), then each is broadcast.
   */
  async invalidateTags(scope: Scope, tags: unknown, options: ChangeOptions | undefined): Promise<ChangeResult> {
    const { name, closed } = this.deps
    if (closed()) throw new TableClosedError(name, undefined, 'invalidateTags')
    const list = checkTags(tags, 'invalidateTags(tags)')
    if (list.length === 0) throw badArgument(RangeError, 'invalidateTags(tags) takes at least one tag (to drop every row, use clear())')
    const { version } = options === undefined ? {} : (readOptions(options, ['version'], 'invalidateTags(tags)') as ChangeOptions)
    if (version !== undefined && !isVersion(version)) throw badNumber(version, `invalidateTags(tags) option "version" must be an integer in [0, ${MAX_VERSION}], got ${describe(version)}`)
    const { versions, applied, l2 } = await this.#bump(
      scope,
      list.map((tag) => scope.tagKey(tag)),
      version ?? 0,
    )
    const taken: { taken?: true } = l2 === 'written' ? { taken: true } : {}
    const sent = await Promise.all(list.map((tag, i) => this.#publish(undefined, { table: name, kind: 'tag', tag, scope: [...scope.path], version: versions[i]!, origin: this.deps.origin, ...taken })))
    return { version: Math.max(...versions), applied, l2, broadcast: sent.every(Boolean) }
  }

  /** See `Table.clear` on a namespace: its mark gets a new version (in L2 first), so every row of the namespace is stale, in O(1). */
  async clearScope(scope: Scope): Promise<ClearResult> {
    const { name, closed, origin } = this.deps
    if (closed()) throw new TableClosedError(name, undefined, 'clear')
    const { versions, l2 } = await this.#bump(scope, [scope.clearKey!], 0)
    const taken: { taken?: true } = l2 === 'written' ? { taken: true } : {}
    const broadcast = await this.#publish(undefined, { table: name, kind: 'clear', origin, scope: [...scope.path], version: versions[0]!, ...taken })
    return { l2: l2 === 'written' ? 'cleared' : l2, broadcast }
  }

  /**
   * New versions for tag keys (no lower than `least`): L2's, else a floor from this table's tag
   * clock; then applied by the owner (`applied` false when the table closed first: the owner had
   * stopped, and L2's call in progress answered as failed).
   */
  async #bump(scope: Scope, keys: string[], least: number): Promise<{ versions: number[]; applied: boolean; l2: 'written' | 'failed' | 'none' }> {
    const { owner, clock } = this.deps
    // The millisecond's last version: rows another process loaded earlier in it are older too.
    const floor = Math.max(least, owner.state.versions.floor(clock.now()))
    const l2 = this.#openL2()
    const minted = owner.l2 === undefined ? undefined : l2 === undefined ? L2_FAILED : await l2.invalidateTags(keys, floor)
    const taken = minted !== undefined && minted !== L2_FAILED
    const versions = taken ? minted : keys.map(() => floor)
    const applied = await new Promise<boolean>((resolve) => owner.send(msg.tags(keys, versions, taken, scope, resolve)))
    return { versions, applied, l2: minted === undefined ? 'none' : minted === L2_FAILED ? 'failed' : 'written' }
  }

  /** Validates a change's options (a put takes `ttl` and `tags` too; the table checked the id); returns what it was given. */
  #check(id: Id, options: PutOptions | undefined, op: 'put' | 'invalidate'): PutOptions {
    if (this.deps.closed()) throw new TableClosedError(this.deps.name, callerIdOf(id), op)
    if (options === undefined) return {}
    const where = `${op}(${showId(callerIdOf(id))})`
    const { version, ttl, tags } = readOptions(options, op === 'put' ? ['version', 'ttl', 'tags'] : ['version'], where) as PutOptions
    if (version !== undefined && !isVersion(version)) {
      throw badNumber(version, `${where} option "version" must be an integer in [0, ${MAX_VERSION}], got ${describe(version)}`)
    }
    if (ttl !== undefined && !(typeof ttl === 'number' && ttl >= 0 && ttl <= MAX_TTL)) {
      throw badNumber(ttl, `${where} option "ttl" must be a number of ms in [0, ${MAX_TTL}], got ${describe(ttl)}`)
    }
    return { version, ttl, tags: tags === undefined ? undefined : [...checkTags(tags, `${where} option "tags"`)] }
  }

  /**
   * The version a change carries: the caller's (refused below a minted version this table knows,
   * see `checkDataVersion`), else a minted one: above every version this table knows for the id (see
   * `mintVersion`), by L2's script when L2 answers (so no other writer gets it), else here.
   */
  async #versionOf(id: Id, given: number | undefined, op: 'put' | 'invalidate'): Promise<number> {
    const { owner, clock, name } = this.deps
    if (given !== undefined) return checkDataVersion(given, known(owner.state, id), `${op}(${showId(callerIdOf(id))})`)
    const floor = mintVersion(known(owner.state, id), clock.now())
    if (floor === undefined) {
      throw badArgument(RangeError, `${op}(${showId(callerIdOf(id))}) on table "${name}": the id already holds version ${MAX_VERSION}, the largest there is; give no version above it`)
    }
    const l2 = this.#openL2()
    const minted = l2 === undefined ? L2_FAILED : await l2.nextVersion(id, floor)
    return minted === L2_FAILED ? floor : minted
  }

  /** L2 refused a change with the caller's version `given`: refused loudly when what L2 holds is a minted version above it (see `checkDataVersion`). */
  async #checkRefused(id: Id, given: number, op: 'put' | 'invalidate'): Promise<void> {
    const l2 = this.#openL2()
    const held = l2 === undefined ? L2_FAILED : await l2.get(id)
    if (held !== L2_FAILED && held !== undefined) checkDataVersion(given, held.version, `${op}(${showId(callerIdOf(id))})`)
  }

  /**
   * Writes a change to L2 (before L1, so no flight can read the old entry once L1 has changed):
   * `entry`, or `unfit` in its place when L2 will not hold the value (too large, not encodable),
   * so that L2 never serves what the change replaced. A change older than what this table knows
   * is not sent: L2 may have lost the newer entry, and must not get the older one back.
   */
  async #writeL2(id: Id, version: number, entry: L2Write, unfit: L2Write): Promise<ChangeResult['l2']> {
    if (this.deps.owner.l2 === undefined) return 'none'
    const l2 = this.#openL2()
    if (l2 === undefined) return 'failed'
    if (version < known(this.deps.owner.state, id)) return 'refused'
    const written = await l2.set(id, entry)
    if (written !== 'unfit' || entry === unfit) return l2Outcome(written)
    // The tombstone in its place: not once the table closed meanwhile (L2 keeps the entry it holds, so 'failed').
    const again = this.#openL2()
    return l2Outcome(again === undefined ? L2_FAILED : await again.set(id, unfit))
  }

  /**
   * The table's L2 while the table is open; `undefined` once it closed: a change racing `close()`
   * asks L2 nothing more (a call after the owner stopped has no bound, and might never settle), so
   * it settles with `l2: 'failed'` (a refusal L2 already gave stands). Every L2 call of a change is
   * made on what this answers just before it, never on a facade read before an await.
   */
  #openL2(): L2Facade | undefined {
    return this.deps.closed() ? undefined : this.deps.owner.l2
  }

  /** Sends a change to the owner and waits for its reply; a stopped owner answers "not applied". */
  #change(make: (reply: ChangeReply) => Message<V>): Promise<{ applied: boolean; version: number }> {
    return new Promise((resolve) => this.deps.owner.send(make((applied, version) => resolve({ applied, version }))))
  }

  /** Publishes a change of `id`. */
  #broadcast(id: Id, version: number, kind: 'put' | 'invalidate'): Promise<boolean> {
    const { name, origin } = this.deps
    return this.#publish(id, { table: name, id, version, kind, origin })
  }

  /** Publishes a message (about `id`, or the whole table) on the table's bus (see {@link publish}). */
  #publish(id: Id | undefined, message: CoherenceMessage): Promise<boolean> {
    return publish(this.deps.owner.publisher, id, message)
  }
}
