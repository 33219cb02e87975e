import { createTable } from '../../../src/index.js'
import type { Row } from '../types.js'
import type { PageContender, PageReader, PageReaderOptions } from './types.js'

/**
 * EchoStore with the origin as the table's `batchLoader`: `table.getMany(page)`. The misses of one
 * owner turn, from every page in flight, go to the origin as one call (split at `maxBatchSize`);
 * an id already in flight is joined, not asked again.
 */
export function echostoreGetMany(maxBatchSize?: number): PageContender {
  return {
    name: maxBatchSize === undefined ? 'echostore getMany' : `echostore getMany (maxBatchSize ${maxBatchSize})`,
    kind: 'subject',
    pkgs: [],
    setup: `createTable({ ttl, capacity, batchLoader: (ids) => origin(ids)${maxBatchSize === undefined ? '' : `, maxBatchSize: ${maxBatchSize}`} }); table.getMany(page)`,
    create({ ttl, capacity, origin }: PageReaderOptions): PageReader {
      const table = createTable<Row>({ name: 'pages', ttl, capacity, batchLoader: (ids) => origin(ids), ...(maxBatchSize !== undefined ? { maxBatchSize } : {}) })
      return {
        read: (ids) => table.getMany(ids),
        close: () => table.close(),
      }
    },
  }
}
