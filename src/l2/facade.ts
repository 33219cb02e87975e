import type { Emitter } from 'mitt'
import { type L2Op, traceL2 } from '../core/channels.js'
import type { Clock } from '../core/clock.js'
import type { OwnerCounterName } from '../core/counters.js'
import { type TableEvents, emitSafely } from '../core/events.js'
import { L2CorruptEntryError, L2TimeoutError, L2UnfitValueError, TableClosedError, describe, reasonOf } from '../core/errors.js'
import { MAX_VERSION, isVersion } from '../core/versions.js'
import { MAX_TTL } from '../table/options.js'
import type { Id } from '../core/id.js'
import type { TagVersions } from '../tags/tag-versions.js'
import { DEFAULT_L2_TIMEOUT, type L2Entry, type L2Store, type L2Write, type LeaseRead } from './store.js'
import { TurnDeadlines } from './turn-deadlines.js'

/** Consecutive failures (errors or timeouts) that open the breaker. */
export const BREAKER_FAILURES = 5
/** How long an open breaker skips L2, in ms of the table's clock, before it lets a call probe again. */
export const BREAKER_COOLDOWN = 1_000

/** What every facade call answers when L2 could not be asked or did not answer (an error, a timeout, an open breaker): the one encoding of an L2 failure. */
export const L2_FAILED: unique symbol = Symbol('L2 failed')
/** A facade call's answer: the store's, or {@link L2_FAILED}. */
export type L2Answer<T> = T | typeof L2_FAILED

/** What a write did: `written`; `refused` (the store holds a newer version); `unfit` (a value the store will not hold: too large or not encodable). */
export type L2WriteOutcome = 'written' | 'refused' | 'unfit'

/** One circuit breaker: consecutive failures, and until when it skips L2. Written only by the facade. */
interface Breaker {
  failures: number
  openUntil: number
}

/** The shard name of a store that has one shard (or does not say). */
const WHOLE_STORE = ''

/**
 * The table's L2 policy around a dumb {@link L2Store}: every call is bounded by the store's
 * `timeout` on the table's clock, every failure becomes {@link L2_FAILED} (never an error for the
 * caller), and after {@link BREAKER_FAILURES} consecutive failures a circuit breaker skips L2 for
 * {@link BREAKER_COOLDOWN} ms, then lets calls probe again; the first success closes it. There is
 * one breaker per shard of the store (`L2Store.shard`: a Redis Cluster master), so a failed node
 * skips L2 only for its own ids; a call about no id (`clear`) has a breaker of its own. A corrupt
 * entry is a miss, not a failure: L2 answered.
 *
 * Its breakers' state is written only by itself. What it counts (`l2_errors`, `l2_timeouts`,
 * `l2_skipped`, `l2_corrupt`, `l2_oversize`, `l2_codec_errors`) it reports through `count`, to the owner, which writes the counters.
 */
export class L2Facade {
  /** The breakers by shard name, made on a shard's first failure. */
  #breakers = new Map<string, Breaker>()
  /** Calls in progress, each able to end itself as a failure without counting (see {@link stop}). */
  readonly #inProgress = new Set<() => void>()
  /** Set by {@link stop}: calls still go to the store, but without a timer on the table's clock. */
  #stopped = false
  /** The store's bound on a call, in ms of the table's clock, counted from the end of the turn that made the call. */
  readonly timeout: number
  /** The deadlines of the calls in progress, one per turn that made calls. */
  readonly #deadlines: TurnDeadlines
  /** The highest tag version read from the store so far (0: none): a load begun after it is newer than it. Written only by {@link #fresh}. */
  seenTagVersion = 0
  /**
   * When every value or absent entry this table has written to the store is gone from it, its grace
   * included (0: none written): until then L2 may answer any of them, whatever became of its row.
   * Written only by {@link set}, as each write is asked, to the end of the life of an entry the store takes by the call's timeout (one that fails may still have landed).
   */
  #writtenUntil = 0

  constructor(
    private readonly store: L2Store,
    private readonly table: string,
    private readonly clock: Clock,
    private readonly count: (counter: OwnerCounterName) => void,
    private readonly events: Emitter<TableEvents>,
    /** The owner's tag versions (its own invalidations and the bus's), read here only: an entry older than one of them is no answer either. */
    private readonly known: TagVersions,
  ) {
    this.timeout = store.timeout ?? DEFAULT_L2_TIMEOUT
    this.#deadlines = new TurnDeadlines(clock, this.timeout)
  }

  /**
   * The live entry, `undefined` on a miss (a corrupt entry included), or {@link L2_FAILED}; a tagged
   * entry older than one of its tags reads as a tombstone of its version (see {@link #fresh}).
   */
  async get(id: Id): Promise<L2Answer<L2Entry | undefined>> {
    const entry = await this.#call('get', id, () => this.store.get(this.table, id), undefined, badEntry)
    return entry === L2_FAILED || entry?.tags === undefined ? entry : (await this.#fresh([entry]))[0]!
  }

  /**
   * The entries of `ids`, in their order: with the store's `getMany`, one call per shard (so each
   * shard's breaker sees its own ids; a failure fails that call's ids), else as concurrent `get`s
   * (each under the policy).
   */
  async getMany(ids: readonly Id[]): Promise<L2Answer<L2Entry | undefined>[]> {
    const many = this.store.getMany
    if (many === undefined) return Promise.all(ids.map((id) => this.get(id)))
    return this.#perShard<L2Answer<L2Entry | undefined>>(ids, async (group) => {
      const entries = await this.#call(
        'getMany',
        undefined,
        async () => {
          const answer = await many.call(this.store, this.table, group)
          if (!Array.isArray(answer) || answer.length !== group.length)
            throw new TypeError(`echostore: L2 getMany answered ${describe(answer)} for ${group.length} ids: an array of one entry (or undefined) per id, in order`)
          const wrong = answer.map(badEntry).find((reason) => reason !== undefined)
          if (wrong !== undefined) throw new TypeError(`echostore: L2 getMany answered ${wrong}`)
          return answer
        },
        undefined,
        undefined,
        group[0],
      )
      if (entries === L2_FAILED) return group.map(() => L2_FAILED)
      if (entries === undefined) return group.map(() => undefined)
      return entries.some((entry) => entry?.tags !== undefined) ? this.#fresh(entries) : entries
    })
  }

  /**
   * `entries` with every tagged one checked, where every L2 answer enters: one older than a tag
   * invalidated since its birth, by any process (the tag's version in the store) or known to this
   * one (its owner's tag versions: an invalidation L2 did not take, heard on the bus or made here),
   * is no answer (counted `tag_stale`), and neither is any tagged one when the store's versions
   * cannot be read. Such an entry reads as a tombstone of its version: nothing answers from it (no
   * graced value either), and the flight that reloads the id carries that version, so its write-back
   * replaces the entry in L2 (the store's guard refuses only a lower version).
   */
  async #fresh(entries: (L2Entry | undefined)[]): Promise<(L2Entry | undefined)[]> {
    const keys = [...new Set(entries.flatMap((entry) => entry?.tags ?? []))]
    const versions = await this.tagVersions(keys)
    const of = new Map<string, number>()
    if (versions !== L2_FAILED) {
      keys.forEach((key, i) => of.set(key, versions[i]!))
      for (const version of versions) if (version > this.seenTagVersion && version < MAX_VERSION) this.seenTagVersion = version
    }
    return entries.map((entry) => {
      if (entry?.tags === undefined) return entry
      const born = entry.born ?? 0
      if (versions === L2_FAILED) return staleAs(entry)
      if (entry.tags.every((key) => of.get(key)! < born) && !this.known.staleInL2(entry.tags, born)) return entry
      this.count('tag_stale')
      return staleAs(entry)
    })
  }

  /** The versions of `tags` in the store (0: never invalidated), or {@link L2_FAILED} (also for a store without tags: its tagged entries are never answered). */
  tagVersions(tags: readonly string[]): Promise<L2Answer<number[]>> {
    const read = this.store.tagVersions
    if (read === undefined) return Promise.resolve(L2_FAILED)
    return this.#call(
      'tagVersions',
      undefined,
      () => read.call(this.store, this.table, tags),
      L2_FAILED,
      (answer) => versionsFor(answer, tags.length),
    )
  }

  /** Gives each of `tags` a new version in the store, no lower than `floor` (see `L2Store.invalidateTags`); {@link L2_FAILED} also for a store without tags. */
  invalidateTags(tags: readonly string[], floor: number): Promise<L2Answer<number[]>> {
    const bump = this.store.invalidateTags
    if (bump === undefined) return Promise.resolve(L2_FAILED)
    return this.#call(
      'invalidateTags',
      undefined,
      () => bump.call(this.store, this.table, tags, floor),
      L2_FAILED,
      (answer) => versionsFor(answer, tags.length) ?? ((answer as number[]).some((version) => version < floor) ? `versions below the floor ${floor}` : undefined),
    )
  }

  /**
   * Writes an entry (see {@link L2WriteOutcome}), or answers {@link L2_FAILED}. With `release` (a
   * lease holder's token) and a store that has `setAndRelease`, the lease is given back in the same
   * step when the store answered `written` or `refused` (not on `unfit` nor a failure: the caller
   * gives it back then, as it does without `setAndRelease`). A tagged entry goes to a store without
   * tag versions as a tombstone of its version: that store could not tell when it goes stale, and
   * must not serve what it replaced either.
   */
  async set(id: Id, given: L2Write, release?: string): Promise<L2Answer<L2WriteOutcome>> {
    const entry: L2Write = given.tags !== undefined && this.store.tagVersions === undefined ? { kind: 'tombstone', version: given.version, ttl: given.ttl } : given
    // The store counts an entry's life from when it takes the write, which is by the call's timeout when it is in time.
    if (entry.kind !== 'tombstone') this.#writtenUntil = Math.max(this.#writtenUntil, this.clock.now() + this.timeout + entry.ttl + (entry.grace ?? 0))
    const leases = this.store.leases
    const both = release !== undefined && leases?.setAndRelease !== undefined
    const written = both
      ? await this.#call<boolean | 'unfit'>('leases.setAndRelease', id, () => leases.setAndRelease!(this.table, id, entry, release), 'unfit', notBoolean)
      : await this.#call<boolean | 'unfit'>('set', id, () => this.store.set(this.table, id, entry), 'unfit', notBoolean)
    return written === L2_FAILED || written === 'unfit' ? written : written ? 'written' : 'refused'
  }

  /** When every value or absent entry this table wrote to the store is gone from it, its grace included (0: none written). */
  get writtenUntil(): number {
    return this.#writtenUntil
  }

  /** True when a holder's write gives its lease back in the same step (`L2Leases.setAndRelease`). */
  get releasesWithSet(): boolean {
    return typeof this.store.leases?.setAndRelease === 'function'
  }

  /** The next version for `id` from the store, no lower than `floor`, or {@link L2_FAILED}. */
  nextVersion(id: Id, floor: number): Promise<L2Answer<number>> {
    return this.#call(
      'nextVersion',
      id,
      () => this.store.nextVersion(this.table, id, floor),
      L2_FAILED,
      (minted) => (isVersion(minted) && minted >= floor ? undefined : `${describe(minted)}, not a version in [${floor}, ${MAX_VERSION}]`),
    )
  }

  /** Clears the table in L2 (see `L2Store.clear`): `'cleared'`, or {@link L2_FAILED}. */
  async clear(): Promise<L2Answer<'cleared'>> {
    const cleared = await this.#call('clear', undefined, () => this.store.clear(this.table), L2_FAILED)
    return cleared === L2_FAILED ? L2_FAILED : 'cleared'
  }

  /**
   * Takes `id`'s lease for `ttl` ms under `token` (see `L2Leases`): true, false when another holds it,
   * or {@link L2_FAILED} (and then its token's lease is given back behind it: see {@link #abandonLease}).
   */
  async leaseAcquire(id: Id, token: string, ttl: number): Promise<L2Answer<boolean>> {
    const taken = await this.#call('leases.acquire', id, () => this.store.leases!.acquire(this.table, id, token, ttl), L2_FAILED, notBoolean)
    if (taken === L2_FAILED) this.#abandonLease(id, token)
    return taken
  }

  /**
   * Takes the leases of `ids` for `ttl` ms under one `token`, in their order: with the store's
   * `acquireMany`, one call per shard (as {@link getMany}), else as concurrent {@link leaseAcquire}s.
   */
  async leaseAcquireMany(ids: readonly Id[], token: string, ttl: number): Promise<L2Answer<boolean>[]> {
    const leases = this.store.leases!
    const many = leases.acquireMany
    if (many === undefined) return Promise.all(ids.map((id) => this.leaseAcquire(id, token, ttl)))
    return this.#perShard<L2Answer<boolean>>(ids, async (group) => {
      const bad = (answer: unknown): string | undefined =>
        Array.isArray(answer) && answer.length === group.length && answer.every((held) => typeof held === 'boolean')
          ? undefined
          : `${describe(answer)} for ${group.length} ids, not an array of one boolean per id`
      const taken = await this.#call('leases.acquireMany', undefined, () => many.call(leases, this.table, group, token, ttl), L2_FAILED, bad, group[0])
      if (taken !== L2_FAILED) return taken
      for (const id of group) this.#abandonLease(id, token)
      return group.map(() => L2_FAILED)
    })
  }

  /** True when the store reads an id and takes its lease in one step (`L2Leases.readOrAcquire`). */
  get readsWithLease(): boolean {
    return typeof this.store.leases?.readOrAcquire === 'function'
  }

  /**
   * Reads `id` and, unless it holds a fill of a version ≥ `floor`, takes its lease, in one step (see
   * `L2Leases.readOrAcquire`), or answers {@link L2_FAILED} (its token's lease then given back behind it). A tagged fill older than one of its tags
   * is no fill: it reads as a tombstone of its version (`tag_stale`), and the lease the store did not ask for is asked now.
   */
  async leaseReadOrAcquire(id: Id, token: string, ttl: number, floor: number): Promise<L2Answer<LeaseRead>> {
    const leases = this.store.leases!
    const read = await this.#call(
      'leases.readOrAcquire',
      id,
      () => leases.readOrAcquire!(this.table, id, token, ttl, floor),
      L2_FAILED,
      (answer) => {
        const { entry, lease } = (answer ?? {}) as Partial<LeaseRead>
        if (lease !== 'taken' && lease !== 'busy' && lease !== 'unasked') return `${describe(answer)}, not an entry with what became of the lease`
        return badEntry(entry)
      },
    )
    if (read === L2_FAILED) this.#abandonLease(id, token)
    if (read === L2_FAILED || read.entry?.tags === undefined) return read
    const [entry] = await this.#fresh([read.entry])
    if (entry === read.entry || read.lease !== 'unasked') return { entry, lease: read.lease }
    const taken = await this.leaseAcquire(id, token, ttl)
    return taken === L2_FAILED ? L2_FAILED : { entry, lease: taken ? 'taken' : 'busy' }
  }

  /**
   * Whether another lease than `token`'s holds `id` now (see `L2Leases.holder`): `false` when `token`
   * or nobody holds it, and when the store cannot tell (no `holder`, or it failed).
   */
  async leaseHeldByAnother(id: Id, token: string): Promise<boolean> {
    const leases = this.store.leases!
    if (leases.holder === undefined) return false
    const holder = await this.#call(
      'leases.holder',
      id,
      () => leases.holder!(this.table, id),
      L2_FAILED,
      (answer) => (answer === undefined || (typeof answer === 'string' && answer !== '') ? undefined : `${describe(answer)}, not a token or undefined`),
    )
    return holder !== L2_FAILED && holder !== undefined && holder !== token
  }

  /** Gives `id`'s lease back if `token` still holds it. */
  leaseRelease(id: Id, token: string): Promise<L2Answer<boolean>> {
    return this.#call('leases.release', id, () => this.store.leases!.release(this.table, id, token), L2_FAILED, notBoolean)
  }

  /**
   * A lease call under `token` failed (timed out, or its answer was lost): it may still land, since a
   * timed-out call is not cancelled, and leave a lease nobody holds, which every other process would
   * wait on for its ttl. So its token's lease is given back behind it, on the same connection, at once:
   * a clean-up, not a call the table waits on, so it is neither bounded nor counted, and goes out even
   * while the breaker is open (compare-and-delete on the token: harmless when the lease never landed).
   */
  #abandonLease(id: Id, token: string): void {
    try {
      void Promise.resolve(this.store.leases!.release(this.table, id, token)).catch(() => {})
    } catch {
      // A store whose release throws has nothing to give back.
    }
  }

  /** Ends `id`'s lease, whoever holds it. */
  leaseVoid(id: Id): Promise<L2Answer<void>> {
    return this.#call('leases.void', id, () => this.store.leases!.void(this.table, id), L2_FAILED)
  }

  /**
   * The table stopped: every call in progress answers {@link L2_FAILED} now and its timer goes, so no
   * timer of a closed table stays on its clock; its outcome, when the store gives it, is counted as
   * any call's is. Later calls (a lease given back as a flight ends) still reach the store, unbounded,
   * and a failure of theirs is counted too.
   */
  stop(): void {
    this.#stopped = true
    for (const end of [...this.#inProgress]) end()
  }

  /** True while the breaker of `id`'s shard (of calls about no id, for `undefined`; of the whole store when it has one shard) skips L2. */
  isOpen(id?: Id): boolean {
    const breaker = this.#breakers.get(this.#shard(id))
    return breaker !== undefined && breaker.failures >= BREAKER_FAILURES && this.clock.now() < breaker.openUntil
  }

  /**
   * Asks `ask` for the ids of each shard apart, at once (one group when the store has one shard),
   * and answers what it answered per id, in the order of `ids`.
   */
  async #perShard<T>(ids: readonly Id[], ask: (group: Id[]) => Promise<T[]>): Promise<T[]> {
    const groups = new Map<string, number[]>()
    ids.forEach((id, i) => {
      const shard = this.#shard(id)
      const group = groups.get(shard)
      if (group === undefined) groups.set(shard, [i])
      else group.push(i)
    })
    const answers = new Array<T>(ids.length)
    await Promise.all(
      [...groups.values()].map(async (indices) => {
        const answered = await ask(indices.map((i) => ids[i]!))
        indices.forEach((i, at) => (answers[i] = answered[at]!))
      }),
    )
    return answers
  }

  /** The shard `id` is on: the store's name for it; calls about no id share one of their own. */
  #shard(id: Id | undefined): string {
    if (this.store.shard === undefined) return WHOLE_STORE
    if (id === undefined) return '*'
    try {
      return this.store.shard(this.table, id) ?? WHOLE_STORE
    } catch {
      return WHOLE_STORE
    }
  }

  /**
   * One store call under the policy. A corrupt entry or an unfit value answers `unusable` (a miss
   * for a read, `'unfit'` for a write): the store answered, so it is counted but is no failure and
   * never trips the breaker. What the store answers is checked with `bad` (a store of the user's
   * own may answer anything): a call that returns no promise, or whose answer `bad` describes, is a
   * failure like an error. `on`: the id whose shard's breaker the call is under (`id` unless a call
   * about many ids names one of them).
   */
  #call<T>(op: L2Op, id: Id | undefined, run: () => Promise<T>, unusable: L2Answer<T>, bad: (answer: unknown) => string | undefined = () => undefined, on: Id | undefined = id): Promise<L2Answer<T>> {
    const shard = this.#shard(on)
    if (this.isOpen(on)) {
      this.count('l2_skipped')
      return Promise.resolve(L2_FAILED)
    }
    // A stopped table's call is unbounded and untraced (no timer of a stopped table stays on its
    // clock); its outcome is counted as any call's is.
    const bounded = !this.#stopped
    const traced = bounded ? traceL2(this.table, op, this.store.address) : undefined
    return new Promise<L2Answer<T>>((resolve) => {
      let done = false
      /** Ends the call once (false when it has already ended): it leaves its turn's deadline and the calls in progress. */
      const over = (): boolean => {
        if (done) return false
        done = true
        if (bounded) {
          unbound()
          this.#inProgress.delete(end)
        }
        return true
      }
      const timeOut = (): void => {
        if (!over()) return
        this.count('l2_timeouts')
        const error = new L2TimeoutError(op, this.timeout, this.#cause(on))
        this.#failed(shard, op, id, error)
        traced?.(true, error)
        resolve(L2_FAILED)
      }
      // The deadline counts from the end of this turn, when a client that writes at the turn's end has sent the request.
      const unbound = bounded ? this.#deadlines.bound(timeOut) : () => {}
      /** True once the call was ended as the table stopped: its outcome, when the store gives it, is still counted. */
      let ended = false
      const end = (): void => {
        if (!over()) return
        ended = true
        traced?.(true, new TableClosedError(this.table, id))
        resolve(L2_FAILED)
      }
      if (bounded) this.#inProgress.add(end)
      const settle = (answer: L2Answer<T>, error?: unknown): void => {
        const open = over()
        if (!open && !ended) return // timed out: counted as such
        if (answer !== L2_FAILED) {
          this.#breakers.delete(shard)
        } else if (error instanceof L2CorruptEntryError || error instanceof L2UnfitValueError) {
          // L2 answered: a miss (or a value it will not hold), not an outage.
          this.count(error instanceof L2CorruptEntryError ? 'l2_corrupt' : error.reason === 'size' ? 'l2_oversize' : 'l2_codec_errors')
          this.#breakers.delete(shard)
          answer = unusable
        } else {
          this.count('l2_errors')
          this.#failed(shard, op, id, error)
        }
        if (!open) return // ended as the table stopped: answered then
        traced?.(answer === L2_FAILED, answer === L2_FAILED ? error : answer)
        resolve(answer)
      }
      let pending: Promise<T>
      try {
        pending = run()
        if (!isThenable(pending)) pending = Promise.reject(new TypeError(`echostore: L2 ${op} returned ${describe(pending)}, not a promise`))
      } catch (error) {
        pending = Promise.reject(error)
      }
      // A thenable is taken as a promise takes it: a `then` that throws is a failure of the call.
      Promise.resolve(pending).then(
        (value) => {
          const wrong = wrongIn(bad, value)
          if (wrong === undefined) settle(value)
          else settle(L2_FAILED, new TypeError(`echostore: L2 ${op} answered ${wrong}`))
        },
        (error: unknown) => settle(L2_FAILED, error),
      )
    })
  }

  /** The store's word on why `id`'s node is not answering, if it has one. */
  #cause(id: Id | undefined): Error | undefined {
    try {
      return this.store.cause?.(this.table, id)
    } catch {
      return undefined
    }
  }

  #failed(shard: string, op: string, id: Id | undefined, error: unknown): void {
    let breaker = this.#breakers.get(shard)
    if (breaker === undefined) this.#breakers.set(shard, (breaker = { failures: 0, openUntil: 0 }))
    breaker.failures++
    if (breaker.failures >= BREAKER_FAILURES) breaker.openUntil = this.clock.now() + BREAKER_COOLDOWN
    if (this.events.all.size > 0) emitSafely(this.events, 'l2_error', { table: this.table, op, id, error })
  }
}

/** A tagged entry that may not answer, as a tombstone of its version with its remaining lifetime (see `L2Facade.#fresh`). */
function staleAs(entry: L2Entry): L2Entry {
  return { kind: 'tombstone', version: entry.version, ttl: entry.ttl }
}

/** True for a promise or a promise-like value (what an L2 call must return). */
function isThenable(value: unknown): value is Promise<unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as { then?: unknown }).then === 'function'
}

/** Why an answer is not `count` versions, or undefined when it is. */
function versionsFor(answer: unknown, count: number): string | undefined {
  if (!Array.isArray(answer) || answer.length !== count) return `${describe(answer)}, not an array of ${count} versions`
  return answer.every(isVersion) ? undefined : `${describe(answer)}, not versions in [0, ${MAX_VERSION}]`
}

/** Why an answer is not a boolean, or undefined when it is one. */
function notBoolean(answer: unknown): string | undefined {
  return typeof answer === 'boolean' ? undefined : `${describe(answer)}, not a boolean`
}

const KINDS: ReadonlySet<unknown> = new Set(['value', 'absent', 'tombstone'])

/**
 * Why what a store's `get` answered is not an {@link L2Entry} (or `undefined`, a miss), or undefined
 * when it is one: a known kind, a version every layer accepts, a finite lifetime of at most a year
 * (a remaining one may be 0 or less: past it, within its grace), a grace in [0, a year].
 */
function badEntry(answer: unknown): string | undefined {
  if (answer === undefined) return undefined
  if (typeof answer !== 'object' || answer === null) return `${describe(answer)}, not an entry or undefined`
  const { kind, version, ttl, grace, tags, born } = answer as Partial<L2Entry>
  if (!KINDS.has(kind)) return `an entry of kind ${describe(kind)}`
  if (tags !== undefined && !(Array.isArray(tags) && tags.every((tag) => typeof tag === 'string') && isVersion(born))) return `an entry of tags ${describe(tags)} born ${describe(born)}`
  if (!isVersion(version)) return `an entry of version ${describe(version)}, not in [0, ${MAX_VERSION}]`
  if (!(typeof ttl === 'number' && Number.isFinite(ttl) && ttl <= MAX_TTL)) return `an entry of lifetime ${describe(ttl)}, not a finite number of ms up to ${MAX_TTL}`
  if (grace !== undefined && !(typeof grace === 'number' && grace >= 0 && grace <= MAX_TTL)) return `an entry of grace ${describe(grace)}`
  return undefined
}

/** What `bad` finds wrong in a store's answer, if anything; an answer whose reading throws (a hostile getter) is wrong, and says what it threw. */
function wrongIn(bad: (answer: unknown) => string | undefined, answer: unknown): string | undefined {
  try {
    return bad(answer)
  } catch (error) {
    return `an answer that could not be read (${reasonOf(error)})`
  }
}
