/**
 * An L2 store whose calls reach the store it wraps when a fast-check scheduler lets them: each call
 * is a request in transit, released in the order the scheduler picks, so a write may land after a
 * clear, a read may answer after a change, and a call may outlive the table's L2 timeout and land
 * later still. It keeps the `L2Store` contract by delegation (leases included).
 */
import type fc from 'fast-check'
import type { L2Store } from '../../src/store.js'

/**
 * What the wrappers of one store saw of clears: how many were asked for and how many reached the
 * store, and the values of writes asked for before a clear that reached the store after it (the
 * store contract lets such a write land in the next generation). Shared by every wrapper of a store.
 */
export class ClearRaces {
  issued = 0
  landed = 0
  /** Values written by writes that raced a clear and landed after it. */
  readonly lateValues = new Set<unknown>()
}

/** Wraps `store` so that each call runs only once `scheduler` releases it; `races` records writes that raced a clear. */
export function scheduledL2(store: L2Store, scheduler: fc.Scheduler, label: string, races: ClearRaces = new ClearRaces()): L2Store {
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
      const before = races.issued
      return later('set', async () => {
        if (races.landed > before) races.lateValues.add(entry.value)
        return store.set(table, id, entry)
      })()
    },
    nextVersion: later('nextVersion', store.nextVersion.bind(store)),
    clear: (table) => {
      races.issued++
      return later('clear', async () => {
        races.landed++
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
