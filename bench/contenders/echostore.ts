import { createTable } from '../../src/index.js'
import type { CacheInstance, CacheOptions, Contender, Row } from './types.js'

/**
 * EchoStore, the subject: `createTable({ ttl, capacity, ... })`, `table.fetch(id, loader)`. Only
 * the options a workload sets are passed; the rest keep the table's defaults. Its sweeper's
 * `swept` counter is read through `stats()`.
 */
export const echostore: Contender = {
  name: 'echostore',
  kind: 'subject',
  setup: 'createTable({ ttl, capacity, jitter?, sweepInterval?, clock?, random? }); table.fetch(id, loader)',
  sweeper: 'its sweeper tick (default sweepInterval 1 s); stats().swept',
  create({ ttl, capacity, loader, jitter, random, clock, sweepInterval }: CacheOptions): CacheInstance {
    const table = createTable<Row>({
      name: 'bench',
      ttl,
      capacity,
      ...(jitter !== undefined ? { jitter } : {}),
      ...(random !== undefined ? { random } : {}),
      ...(clock !== undefined ? { clock } : {}),
      ...(sweepInterval !== undefined ? { sweepInterval } : {}),
    })
    const load = (id: string | number) => loader(id as string)
    return {
      fetch: (id) => table.fetch(id, load),
      close: () => table.close(),
      swept: () => table.stats().swept,
      size: () => table.stats().size,
    }
  },
}
