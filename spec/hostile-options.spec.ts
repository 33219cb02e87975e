/**
 * An options object whose getters throw (or a Proxy whose traps throw) is a bad argument like any
 * other: `readFetchOptions` says it throws "a TypeError/RangeError naming the bad one (also for an
 * object whose getters throw)", and the README says bad arguments are `TypeError`/`RangeError` with
 * the code `ECHOSTORE_BAD_ARGUMENT`. Found by the soak's bad-input catalog ("hostile option objects").
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
  // Bug: the getter's own Error escapes as the rejection (fetch, put, invalidate) or the throw
  // (createTable); it is not a TypeError and carries no ECHOSTORE_BAD_ARGUMENT code.
  it.fails('is refused by fetch with a TypeError', async () => {
    const table = createTable<string>()
    await expect(table.fetch('k', () => 'v', throwingGetter('timeout'))).rejects.toSatisfy((error) => error instanceof TypeError)
    await expect(table.fetch('k', () => 'v', throwingGetter('timeout'))).rejects.toMatchObject(refusal)
    await table.close()
  })

  it.fails('is refused by put and invalidate with a TypeError', async () => {
    const table = createTable<string>()
    await expect(table.put('k', 'v', throwingGetter('version'))).rejects.toSatisfy((error) => error instanceof TypeError)
    await expect(table.invalidate('k', throwingGetter('version'))).rejects.toMatchObject(refusal)
    await table.close()
  })

  it.fails('is refused by createTable with a TypeError', () => {
    expect(() => createTable(throwingGetter('ttl'))).toThrow(TypeError)
  })

  it('is refused before the lookup, and nothing is left pending or counted', async () => {
    const table = createTable<string>()
    await expect(table.fetch('k', () => 'v', throwingGetter('signal'))).rejects.toThrow()
    expect(table.stats()).toMatchObject({ hits: 0, misses: 0, flights: 0, inflight: 0 })
    await table.close()
  })
})
