/**
 * An options object whose getters throw (or a Proxy whose traps throw) is a bad argument like any
 * other: a `TypeError` with the code `ECHOSTORE_BAD_ARGUMENT`, naming the call and the option, with
 * what the getter threw as its `cause`; a fetch, put or invalidate rejects with it, createTable
 * throws it.
 */
import { describe, expect, it } from 'vitest'
import { createTable } from '../src/index.js'

/** An options object whose `key` getter throws a plain Error. */
const throwingGetter = (key: string) =>
  Object.defineProperty({}, key, {
    enumerable: true,
    get() {
      throw new Error(`getter of ${key}`)
    },
  })

const refusal = { code: 'ECHOSTORE_BAD_ARGUMENT' }

describe('an options object whose getters throw', () => {
  it('is refused by fetch with a TypeError', async () => {
    const table = createTable<string>()
    await expect(table.fetch('k', () => 'v', throwingGetter('timeout'))).rejects.toSatisfy((error) => error instanceof TypeError)
    await expect(table.fetch('k', () => 'v', throwingGetter('timeout'))).rejects.toMatchObject(refusal)
    await table.close()
  })

  it('is refused by put and invalidate with a TypeError', async () => {
    const table = createTable<string>()
    await expect(table.put('k', 'v', throwingGetter('version'))).rejects.toSatisfy((error) => error instanceof TypeError)
    await expect(table.invalidate('k', throwingGetter('version'))).rejects.toMatchObject(refusal)
    await table.close()
  })

  it('is refused by createTable with a TypeError naming the option', () => {
    expect(() => createTable(throwingGetter('ttl'))).toThrow(TypeError)
    expect(() => createTable(throwingGetter('ttl'))).toThrow('echostore: createTable: option "ttl" could not be read (getter of ttl)')
    const keysTrap = new Proxy(
      {},
      {
        ownKeys: () => {
          throw new Error('no keys')
        },
      },
    )
    expect(() => createTable(keysTrap)).toThrow('echostore: createTable: its keys could not be read (no keys)')
  })

  it('is refused before the lookup, and nothing is left pending or counted', async () => {
    const table = createTable<string>()
    await expect(table.fetch('k', () => 'v', throwingGetter('signal'))).rejects.toThrow()
    expect(table.stats()).toMatchObject({ hits: 0, misses: 0, flights: 0, inflight: 0 })
    await table.close()
  })
})
