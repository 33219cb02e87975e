import { createTable } from '../../../src/index.js'
import type { Row } from '../types.js'
import type { PageContender, PageReader, PageReaderOptions } from './types.js'

/** EchoStore read the N+1 way: `table.fetch(id, loader)` for each id of a page, each miss its own origin call of one id (coalesced per id). */
export const echostoreFetch: PageContender = {
  name: 'echostore fetch',
  kind: 'subject',
  pkgs: [],
  setup: 'createTable({ ttl, capacity }); Promise.all(page.map((id) => table.fetch(id, (id) => origin([id]) → its row)))',
  create({ ttl, capacity, origin }: PageReaderOptions): PageReader {
    const table = createTable<Row>({ name: 'pages', ttl, capacity })
    const load = async (id: string) => (await origin([id]))[0]!
    return {
      read: (ids) => Promise.all(ids.map((id) => table.fetch(id, load))),
      close: () => table.close(),
    }
  },
}
