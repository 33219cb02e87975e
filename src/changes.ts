/**
 * The table's change path: `put` and `invalidate` (version, L2 write, the owner's L1 change,
 * broadcast) and what the bus delivers. L2 is written first, version-guarded, so once a change has
 * reached L1 no flight can read the old entry from L2; the bus carries no value, only the version.
 */
import type { Emitter } from 'mitt'
import type { Bus } from './bus/bus.js'
import type { Clock } from './clock.js'
import { emitSafely } from './emit-safely.js'
import { TableClosedError, badArgument, badNumber, describe, showId } from './errors.js'
import type { Expiry } from './expiry.js'
import { type Id, isId } from './id.js'
import { type L2Answer, L2_FAILED } from './l2/facade.js'
import { l2Write } from './l2/write.js'
import { known } from './owner/changes.js'
import { type ChangeReply, type Message, msg } from './owner/messages.js'
import type { Owner } from './owner/owner.js'
import type { TableEvents } from './table-events.js'

/** Options of `table.put` and `table.invalidate`. */
export interface ChangeOptions {
  /**
   * The version of this change: a number that grows with each change of the id (a row version, an
   * `updated_at` in ms). Default: the next version (L2's per-id counter when an L2 is set, else
   * the highest version this table knows + 1).
   */
  version?: number
}

/** What a put or invalidate did. */
export interface ChangeResult {
  /** The version the change carried (given, or assigned). */
  version: number
  /** False when something newer was already known (L1 or L2): the change was refused locally, but still broadcast. */
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

/** Bound in ms (on the table's clock) on publishing one change to the bus; past it `bus_errors` counts it. */
export const PUBLISH_TIMEOUT = 1_000

/** What the change path works with: the table's own pieces. */
export interface ChangeDeps<V> {
  name: string
  origin: string
  owner: Owner<V>
  bus: Bus | undefined
  clock: Clock
  expiry: Expiry
  tombstoneLife: number
  events: Emitter<TableEvents>
  /** True once the table is closing: changes are refused. */
  closed(): boolean
}

/** How an L2 write answered, as a {@link ChangeResult}'s `l2`. */
function l2Outcome(answer: L2Answer<boolean>): ChangeResult['l2'] {
  return answer === L2_FAILED ? 'failed' : answer ? 'written' : 'refused'
}

/** A table's puts and invalidates. */
export class Changes<V> {
  constructor(private readonly deps: ChangeDeps<V>) {}

  /** See `Table.put`. */
  async put(id: Id, value: V | undefined, options: ChangeOptions | undefined): Promise<ChangeResult> {
    const { owner, clock, expiry, tombstoneLife } = this.deps
    const given = await this.#versionFor(this.#check(id, options, 'put'), id)
    const now = clock.now()
    const expiresAt = expiry.draw(value, now)
    let l2: ChangeResult['l2'] = 'none'
    if (owner.l2 !== undefined) {
      if (given === L2_FAILED || given === undefined) l2 = 'failed' // L2 could not even issue a version
      else if (given < known(owner.state, id)) l2 = 'refused' // older than this table knows: L2 must not get it either
      else l2 = l2Outcome(await owner.l2.set(id, expiresAt === undefined ? l2Write.tombstone(given, tombstoneLife) : l2Write.row(value, given, expiresAt, now)))
    }
    const version = given === L2_FAILED ? undefined : given
    const change = await this.#change((reply) => msg.put(id, value, expiresAt, version, l2 === 'refused', reply))
    return { applied: change.applied && l2 !== 'refused', version: change.version, l2, broadcast: await this.#broadcast(id, change.version, 'put') }
  }

  /** See `Table.invalidate`. */
  async invalidate(id: Id, options: ChangeOptions | undefined): Promise<ChangeResult> {
    const { owner, tombstoneLife } = this.deps
    const given = await this.#versionFor(this.#check(id, options, 'invalidate'), id)
    const version = given === L2_FAILED ? undefined : given
    const bury = (v: number) => owner.l2!.set(id, l2Write.tombstone(v, tombstoneLife))
    let l2: ChangeResult['l2'] = 'none'
    if (owner.l2 !== undefined && version !== undefined) l2 = version < known(owner.state, id) ? 'refused' : l2Outcome(await bury(version))
    const change = await this.#change((reply) => msg.invalidate(id, version, reply))
    if (owner.l2 !== undefined && version === undefined) l2 = l2Outcome(await bury(change.version))
    return { applied: change.applied && l2 !== 'refused', version: change.version, l2, broadcast: await this.#broadcast(id, change.version, 'invalidate') }
  }

  /** Validates a change's id and options; returns the version it was given, if any. */
  #check(id: Id, options: ChangeOptions | undefined, op: 'put' | 'invalidate'): number | undefined {
    if (!isId(id)) throw badArgument(TypeError, `${op} id must be a string or a finite number, got ${describe(id)}`)
    if (this.deps.closed()) throw new TableClosedError(this.deps.name, id, op)
    const version = options?.version
    if (version !== undefined && !(Number.isSafeInteger(version) && version >= 0)) {
      throw badNumber(version, `${op}(${showId(id)}) option "version" must be an integer ≥ 0, got ${describe(version)}`)
    }
    return version
  }

  /** The version a change carries: the caller's, else L2's next one ({@link L2_FAILED} when L2 cannot answer); `undefined` lets the owner assign highest + 1. */
  async #versionFor(given: number | undefined, id: Id): Promise<L2Answer<number> | undefined> {
    if (given !== undefined) return given
    return this.deps.owner.l2?.nextVersion(id)
  }

  /** Sends a change to the owner and waits for its reply; a stopped owner answers "not applied". */
  #change(make: (reply: ChangeReply) => Message<V>): Promise<{ applied: boolean; version: number }> {
    return new Promise((resolve) => this.deps.owner.send(make((applied, version) => resolve({ applied, version }))))
  }

  /** Publishes a change, bounded by {@link PUBLISH_TIMEOUT} on the table's clock; never throws. */
  async #broadcast(id: Id, version: number, kind: 'put' | 'invalidate'): Promise<boolean> {
    const { bus, clock, events, name, origin, owner } = this.deps
    if (bus === undefined) return false
    const published = await new Promise<boolean>((resolve) => {
      const timer = clock.setTimeout(() => resolve(false), PUBLISH_TIMEOUT)
      const done = (ok: boolean, error?: unknown) => {
        clock.clearTimeout(timer)
        if (!ok && events.all.size > 0) emitSafely(events, 'error', { table: name, id, error })
        resolve(ok)
      }
      try {
        bus.publish({ table: name, id, version, kind, origin }).then(
          () => done(true),
          (error: unknown) => done(false, error),
        )
      } catch (error) {
        done(false, error)
      }
    })
    if (!published) owner.post(msg.count('bus_errors'))
    return published
  }
}
