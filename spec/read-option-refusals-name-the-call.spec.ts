/**
 * A bad option of `get(id, options)` is refused naming `get`, the call the caller made, not `fetch`
 * (both read through one path): on a table with a loader, with a batch loader, and in a namespace
 * view, where the id shown is the caller's. A caller's own timeout in a namespace names its id too.
 */
import { describe, expect, it } from 'vitest'
import { FetchTimeoutError, createTable } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { latchedLoader, settle } from './support/latch.js'

describe("get's option refusals name get", () => {
  const tables = {
    loader: () => createTable<string>({ name: 'g', clock: manualClock(), loader: (id) => id }),
    batchLoader: () => createTable<string>({ name: 'g', clock: manualClock(), batchLoader: (ids) => [...ids] }),
  }
  for (const [kind, make] of Object.entries(tables)) {
    it(`with a ${kind}, in the table and in a namespace view`, async () => {
      const table = make()
      for (const reader of [table, table.namespace('acme')]) {
        await expect(reader.get('a', { timeout: 0 })).rejects.toMatchObject({
          name: 'RangeError',
          code: 'ECHOSTORE_BAD_ARGUMENT',
          message: 'echostore: get("a") option "timeout" must be a number of ms in (0, 2147483647], got 0',
        })
        await expect(reader.get('a', { forceRefresh: 1 as never })).rejects.toMatchObject({
          name: 'TypeError',
          message: 'echostore: get("a") option "forceRefresh" must be a boolean, got 1',
        })
        await expect(reader.get('a', { timout: 1 } as never)).rejects.toThrow(/^echostore: get\("a"\): unknown option "timout"/)
        // fetch still names fetch.
        await expect(reader.fetch('a', (id) => id, { timeout: -1 })).rejects.toThrow(/^echostore: fetch\("a"\) option "timeout"/)
      }
      expect(table.stats()).toMatchObject({ hits: 0, misses: 0, loads: 0 })
      await table.close()
    })
  }
})

describe("a namespace caller's own deadline", () => {
  it('names the caller’s id, not its key in the table', async () => {
    const clock = manualClock()
    const acme = createTable<string>({ name: 'users', clock }).namespace('acme')
    const origin = latchedLoader<string>()
    const read = acme.fetch('a', origin.loader, { timeout: 10 })
    await settle()
    clock.advance(10)
    const error = await read.catch((e: unknown) => e)
    origin.only().resolve('A')
    expect(error).toBeInstanceOf(FetchTimeoutError)
    expect(error).toMatchObject({ id: 'a', timeout: 10 })
    expect((error as Error).message).toMatch(/^echostore: the read of "a" on table "users" gave up after its timeout of 10 ms/)
    await acme.close()
  })
})
