import { systemClock, isClock, unfitClock, type Clock, type TimerHandle } from '../core/clock.js'
import { ChaosError, L2CorruptEntryError, badArgument, badNumber, describe } from '../core/errors.js'
import type { Id } from '../core/id.js'
import { l2Key } from './keys.js'
import { L2_STORE_RULE, isL2Store, type L2Entry, type L2Store, type L2Write } from './store.js'

/** The store calls a fault can target (`get`: `getMany` too; `lease`: every call of the store's leases). `close` always passes through. */
export type ChaosOp = 'get' | 'set' | 'nextVersion' | 'clear' | 'lease'

/**
 * What a faulted call does instead of (or before) reaching the store:
 * - `throw`: rejects with `error` (default: an `Error` naming the call); with `sync: true` it throws
 *   before returning a promise, like a broken driver;
 * - `stall`: does not settle; the call reaches the store only when released, `ms` later on the clock
 *   when given, or by {@link ChaosL2.heal}, and then settles as the store does;
 * - `corrupt` (`get` only): rejects with `L2CorruptEntryError`, as a garbage payload would.
 */
export type ChaosFault = { kind: 'throw'; error?: unknown; sync?: boolean } | { kind: 'stall'; ms?: number } | { kind: 'corrupt' }

/** A store wrapped by {@link chaosL2}: the store itself (its `timeout` included), plus the controls. */
export interface ChaosL2 extends L2Store {
  /**
   * Makes calls of `op` (or of every op, for `'all'`) fail with `fault`, until {@link heal} or, with
   * `times`, for that many calls of each op. A later `fail` for the same op replaces the earlier fault.
   */
  fail(op: ChaosOp | 'all', fault: ChaosFault, options?: { times?: number }): void
  /** Removes every fault and releases every stalled call now (each then settles as the store does). */
  heal(): void
  /** Calls made per op since creation, faulted or not. */
  readonly calls: Readonly<Record<ChaosOp, number>>
  /** Calls stalled now and not yet released. */
  readonly stalled: number
}

const OPS: readonly ChaosOp[] = ['get', 'set', 'nextVersion', 'clear', 'lease']

interface Armed {
  fault: ChaosFault
  /** Faulted calls left before the op heals by itself (Infinity: until `heal`). */
  left: number
}

interface Stall {
  timer: TimerHandle | undefined
  release(): void
}

/**
 * Wraps `store` with faults on demand, for testing the table's L2 failure policy. Timed stalls use
 * `clock` (default: the system clock), so a test drives them with a `manualClock`. A test that stalls
 * calls ends with `heal()` so that nothing is left pending.
 */
export function chaosL2(store: L2Store, clock: Clock = systemClock): ChaosL2 {
  if (!isL2Store(store)) throw badArgument(TypeError, `chaosL2: the store to wrap ${L2_STORE_RULE}, got ${describe(store)}`)
  const unfit = clock === systemClock ? undefined : unfitClock(clock)
  if (unfit !== undefined) throw badArgument(isClock(clock) ? RangeError : TypeError, `chaosL2: the clock ${unfit}, got ${describe(clock)}`)
  const faults = new Map<ChaosOp, Armed>()
  const calls: Record<ChaosOp, number> = { get: 0, set: 0, nextVersion: 0, clear: 0, lease: 0 }
  const stalls = new Set<Stall>()
  const leases = store.leases

  function stall<T>(ms: number | undefined, call: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const held: Stall = {
        timer: undefined,
        release() {
          if (!stalls.delete(held)) return
          if (held.timer !== undefined) clock.clearTimeout(held.timer)
          new Promise<T>((settle) => settle(call())).then(resolve, reject)
        },
      }
      stalls.add(held)
      if (ms !== undefined) held.timer = clock.setTimeout(held.release, ms)
    })
  }

  function run<T>(op: ChaosOp, table: string, id: Id | undefined, call: () => Promise<T>): Promise<T> {
    calls[op]++
    const armed = faults.get(op)
    if (armed === undefined) return call()
    if (--armed.left <= 0) faults.delete(op)
    const { fault } = armed
    switch (fault.kind) {
      case 'throw': {
        const error = 'error' in fault ? fault.error : new ChaosError(op)
        if (fault.sync === true) throw error
        return Promise.reject(error)
      }
      case 'corrupt':
        return Promise.reject(new L2CorruptEntryError(l2Key('chaos:', table, id ?? ''), 'chaos: garbage payload'))
      case 'stall':
        return stall(fault.ms, call)
    }
  }

  return {
    fail(op, fault, { times = Infinity } = {}) {
      const ops = op === 'all' ? OPS : [op]
      if (!ops.every((o) => OPS.includes(o))) throw badArgument(TypeError, `chaosL2.fail: unknown op ${describe(op)} (known: ${OPS.join(', ')}, all)`)
      if (fault.kind === 'corrupt' && op !== 'get') throw badArgument(TypeError, `chaosL2.fail: 'corrupt' applies to 'get' only, got ${describe(op)}`)
      if (fault.kind === 'stall' && fault.ms !== undefined && !(fault.ms >= 0)) throw badNumber(fault.ms, `chaosL2.fail: stall ms must be ≥ 0, got ${describe(fault.ms)}`)
      if (!(times >= 1)) throw badNumber(times, `chaosL2.fail: times must be ≥ 1, got ${describe(times)}`)
      for (const o of ops) faults.set(o, { fault, left: times })
    },
    heal() {
      faults.clear()
      for (const held of [...stalls]) held.release()
    },
    get calls() {
      return calls
    },
    get stalled() {
      return stalls.size
    },
    get timeout() {
      return store.timeout
    },
    get: (table: string, id: Id): Promise<L2Entry | undefined> => run('get', table, id, () => store.get(table, id)),
    ...(store.getMany !== undefined && {
      getMany: (table: string, ids: readonly Id[]): Promise<(L2Entry | undefined)[]> => run('get', table, ids[0], () => store.getMany!(table, ids)),
    }),
    set: (table: string, id: Id, entry: L2Write): Promise<boolean> => run('set', table, id, () => store.set(table, id, entry)),
    nextVersion: (table: string, id: Id, floor: number): Promise<number> => run('nextVersion', table, id, () => store.nextVersion(table, id, floor)),
    clear: (table: string): Promise<void> => run('clear', table, undefined, () => store.clear(table)),
    ...(leases !== undefined && {
      leases: {
        acquire: (table: string, id: Id, token: string, ttl: number) => run('lease', table, id, () => leases.acquire(table, id, token, ttl)),
        ...(leases.acquireMany !== undefined && {
          acquireMany: (table: string, ids: readonly Id[], token: string, ttl: number) => run('lease', table, ids[0], () => leases.acquireMany!(table, ids, token, ttl)),
        }),
        ...(leases.holder !== undefined && {
          holder: (table: string, id: Id) => run('lease', table, id, () => leases.holder!(table, id)),
        }),
        release: (table: string, id: Id, token: string) => run('lease', table, id, () => leases.release(table, id, token)),
        void: (table: string, id: Id) => run('lease', table, id, () => leases.void(table, id)),
      },
    }),
    close: () => store.close(),
  }
}
