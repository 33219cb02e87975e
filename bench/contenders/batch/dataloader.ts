import DataLoader from 'dataloader'
import { LRUCache } from 'lru-cache'
import type { Row } from '../types.js'
import type { PageContender, PageReader, PageReaderOptions } from './types.js'

/**
 * DataLoader in front of lru-cache: a page reads each id from lru-cache, and its misses go to a
 * DataLoader made for that page (one per request, as DataLoader's docs recommend), whose batch
 * function asks the origin for them in one call and writes the rows to lru-cache. Two pages in
 * flight that miss the same id each ask for it: DataLoader's own cache lives one page.
 */
export const dataloaderLru: PageContender = {
  name: 'dataloader + lru-cache',
  kind: 'peer',
  pkgs: ['dataloader', 'lru-cache'],
  setup: 'new LRUCache({ max: capacity, ttl }); per page, new DataLoader(batch), lru.get(id) ?? loader.load(id), batch = origin(ids), then lru.set each row',
  create({ ttl, capacity, origin }: PageReaderOptions): PageReader {
    const lru = new LRUCache<string, Row>({ max: capacity, ttl })
    const batch = async (ids: readonly string[]): Promise<Row[]> => {
      const rows = await origin(ids)
      for (let i = 0; i < ids.length; i++) lru.set(ids[i]!, rows[i]!)
      return rows
    }
    return {
      read(ids) {
        const loader = new DataLoader<string, Row>(batch)
        return Promise.all(ids.map((id) => lru.get(id) ?? loader.load(id)))
      },
      async close() {
        lru.clear()
      },
    }
  },
}
