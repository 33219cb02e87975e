import type { Loader, Row } from './types.js'

/** A synchronous store of rows: what a plain read-through wraps. */
export interface RowStore {
  get(id: string): Row | undefined
  set(id: string, row: Row): unknown
}

/**
 * A plain read-through `fetch` over `store`: a held row at once, else the loader's row, written
 * to the store. No coalescing: concurrent misses on one id each call the loader.
 */
export function readThrough(store: RowStore, loader: Loader): (id: string) => Promise<Row> {
  async function load(id: string): Promise<Row> {
    const row = await loader(id)
    store.set(id, row)
    return row
  }
  return (id) => {
    const row = store.get(id)
    return row !== undefined ? Promise.resolve(row) : load(id)
  }
}
