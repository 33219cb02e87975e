/**
 * An L2 store whose calls reach the store it wraps when a fast-check scheduler lets them: each call
 * is a request in transit, released in the order the scheduler picks, so a write may land after a
 * clear, a read may answer after a change, and a call may outlive the table's L2 timeout and land
 * later still. It keeps the `L2Store` contract by delegation (leases included).
 */
import type fc from 'fast-check'
import type { L2Leases, L2Store } from '../../src/index.js'

/** Wraps `store` so that each call runs only once `scheduler` releases it. */
export function scheduledL2(store: L2Store & { leases: L2Leases }, scheduler: fc.Scheduler, label: string): L2Store & { leases: L2Leases } {
  const later = async <T>(op: string, run: () => Promise<T>): Promise<T> => {
    await scheduler.schedule(Promise.resolve(), `${label} ${op}`)
    return run()
  }
  const leases = store.leases
  return {
    timeout: store.timeout,
    get: (table, id) => later('get', () => store.get(table, id)),
    set: (table, id, entry) => later('set', () => store.set(table, id, entry)),
    nextVersion: (table, id, floor) => later('nextVersion', () => store.nextVersion(table, id, floor)),
    clear: (table) => later('clear', () => store.clear(table)),
    leases: {
      acquire: (table, id, token, ttl) => later('leases.acquire', () => leases.acquire(table, id, token, ttl)),
      release: (table, id, token) => later('leases.release', () => leases.release(table, id, token)),
      void: (table, id) => later('leases.void', () => leases.void(table, id)),
    },
    close: () => store.close(),
  }
}
