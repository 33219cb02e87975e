import type { L2Store } from '../../src/store.js'

/** `store` as it is, but every tag invalidation fails (an L2 down for them alone): a table's `invalidateTags` then answers `l2: 'failed'`. */
export function failingTagInvalidations(store: L2Store): L2Store {
  return { ...store, invalidateTags: () => Promise.reject(new Error('down')) }
}
