/**
 * An L2 store whose calls reach the store it wraps when a fast-check scheduler lets them: each call
 * is a request in transit, released in the order the scheduler picks, so a write may land after a
 * clear, a read may answer after a change, and a call may outlive the table's L2 timeout and land
 * later still. It keeps the `L2Store` contract by delegation (leases included).
 */
import type fc from 'fast-check'
import type { L2Store } from '../../src/store.js'

/** Wraps `store` so that each call runs only once `scheduler` releases it. */
export function scheduledL2(store: L2Store, scheduler: fc.Scheduler, label: string): L2Store {
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
    set: later('set', store.set.bind(store)),
    nextVersion: later('nextVersion', store.nextVersion.bind(store)),
    clear: later('clear', store.clear.bind(store)),
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
