import type { L2Store } from '../../src/store.js'
import type { ManualClock } from '../../src/testing.js'

/** A store whose every call answers `ms` later on `clock` (a slow L2, still within its timeout); the call reaches `store` then. */
export function slowL2(store: L2Store, clock: ManualClock, ms: number): L2Store {
  const later =
    <A extends unknown[], T>(run: (...args: A) => Promise<T>) =>
    (...args: A): Promise<T> =>
      new Promise<T>((resolve, reject) => clock.setTimeout(() => run(...args).then(resolve, reject), ms))
  const leases = store.leases
  return {
    ...(store.timeout === undefined ? {} : { timeout: store.timeout }),
    get: later(store.get.bind(store)),
    set: later(store.set.bind(store)),
    nextVersion: later(store.nextVersion.bind(store)),
    clear: later(store.clear.bind(store)),
    ...(leases === undefined ? {} : { leases: { acquire: later(leases.acquire.bind(leases)), release: later(leases.release.bind(leases)), void: later(leases.void.bind(leases)) } }),
    close: () => store.close(),
  }
}
