import { createTable } from '../../../src/index.js'
import type { Row } from '../types.js'
import type { PageContender, PageReader, PageReaderOptions } from './types.js'

/**
 * EchoStore with the origin as the table's `batchLoader`: `table.getMany(page)`. The misses of one
 * owner turn go to the origin as one call (split at `maxBatchSize`, default 1,000); an id already
 * in flight, from any page, is joined, not asked again.
 */
export const echostoreGetMany: PageContender = {
  name: 'echostore getMany',
  kind: 'subject',
  pkgs: [],
  setup: 'createTable({ ttl, capacity, batchLoader: (ids) => origin(ids) }); table.getMany(page)',
  create({ ttl, capacity, origin }: PageReaderOptions): PageReader {
    const table = createTable<Row>({ name: 'pages', ttl, capacity, batchLoader: (ids) => origin(ids) })
    return {
      read: (ids) => table.getMany(ids),
      close: () => table.close(),
    }
  },
}
