/**
 * An L2 store whose calls reach the store it wraps when a fast-check scheduler lets them: each call
 * is a request in transit, released in the order the scheduler picks, so a write may land after a
 * clear, a read may answer after a change, and a call may outlive the table's L2 timeout and land
 * later still. It keeps the `L2Store` contract by delegation (leases included).
 */
import type fc from 'fast-check'
import type { L2Store } from '../../src/store.js'

/**
 * The writes that reached the store late, by the values they wrote: after a clear that was asked for
 * after them (the store contract lets such a write land in the next generation), or after the
 * table had given up on them (past the store's timeout: the README says such a write may still
 * land, and only the version guard of a live entry stands in its way). Shared by every wrapper of a store.
 */
export class LateWrites {
  /** Clears asked for, and clears that reached the store. */
  issued = 0
  landed = 0
  readonly values = new Set<unknown>()
  constructor(
    readonly clock: { now(): number },
    /** The table's bound on one L2 call, in ms. */
    readonly timeout: number,
  ) {}
}

/** Wraps `store` so that each call runs only once `scheduler` releases it; `late` records the writes that landed late. */
export function scheduledL2(store: L2Store, scheduler: fc.Scheduler, label: string, late: LateWrites): L2Store {
  const later =
    <A extends unknown[], T>(op: string, run: (...args: A) => Promise<T>) =>
    async (...args: A): Promise<T> => {
      await scheduler.schedule(Promise.resolve(), `${label} ${op}`)
      return run(...args)
    }
  const leases = store.leases
  return {
    ...(store.timeout === undefined ? {} : { timeout: store.timeout }),
    get: later('get', store.get.bind(store)),
    set: (table, id, entry) => {
      const before = late.issued
      const askedAt = late.clock.now()
      return later('set', async () => {
        if (late.landed > before || late.clock.now() - askedAt >= late.timeout) late.values.add(entry.value)
        return store.set(table, id, entry)
      })()
    },
    nextVersion: later('nextVersion', store.nextVersion.bind(store)),
    clear: (table) => {
      late.issued++
      return later('clear', async () => {
        late.landed++
        return store.clear(table)
      })()
    },
    ...(leases === undefined
      ? {}
      : {
          leases: {
            acquire: later('leases.acquire', leases.acquire.bind(leases)),
            release: later('leases.release', leases.release.bind(leases)),
            void: later('leases.void', leases.void.bind(leases)),
          },
        }),
    close: () => store.close(),
  }
}
