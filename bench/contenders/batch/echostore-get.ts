import { createTable } from '../../../src/index.js'
import type { Row } from '../types.js'
import type { PageContender, PageReader, PageReaderOptions } from './types.js'

/**
 * EchoStore with the origin as the table's `batchLoader`, a page read as one `table.get(id)` per id:
 * the gets of one turn that miss go to the origin as one call, as `getMany`'s do.
 */
export const echostoreGet: PageContender = {
  name: 'echostore get per id',
  kind: 'subject',
  pkgs: [],
  setup: 'createTable({ ttl, capacity, batchLoader: (ids) => origin(ids) }); Promise.all(page.map((id) => table.get(id)))',
  create({ ttl, capacity, origin }: PageReaderOptions): PageReader {
    const table = createTable<Row>({ name: 'pages', ttl, capacity, batchLoader: (ids) => origin(ids) })
    return {
      read: (ids) => Promise.all(ids.map((id) => table.get(id))),
      close: () => table.close(),
    }
  },
}
