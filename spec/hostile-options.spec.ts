/**
 * An options object whose getters throw (or a Proxy whose traps throw) is a bad argument like any
 * other: a `TypeError` with the code `ECHOSTORE_BAD_ARGUMENT`, naming the call and the option, with
 * what the getter threw as its `cause`; a fetch, put or invalidate rejects with it, createTable
 * throws it.
 */
import { describe, expect, it } from 'vitest'
import { createTable } from '../src/index.js'
import { manualClock } from '../src/testing.js'

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

/** `options` behind getters that count their reads in `reads`, by option name. */
function counted(options: Record<string, unknown>, reads: Record<string, number>): Record<string, unknown> {
  const object = {}
  for (const [key, value] of Object.entries(options))
    Object.defineProperty(object, key, {
      enumerable: true,
      get() {
        reads[key] = (reads[key] ?? 0) + 1
        return value
      },
    })
  return object
}

describe('an options object is read once', () => {
  it('by createTable: each getter runs once', async () => {
    const reads: Record<string, number> = {}
    const table = createTable<string>(counted({ name: 'once', ttl: 1_000, jitter: 0, capacity: 10, sweepInterval: 1e9, clock: manualClock() }, reads))
    expect(reads).toEqual({ name: 1, ttl: 1, jitter: 1, capacity: 1, sweepInterval: 1, clock: 1 })
    await table.fetch('a', () => 'v')
    await table.close()
    expect(reads).toEqual({ name: 1, ttl: 1, jitter: 1, capacity: 1, sweepInterval: 1, clock: 1 }) // and never again
  })

  it('by createTable: a getter that answers differently on each read cannot make the table see two values', async () => {
    const clock = manualClock(0)
    let read = 0
    const ttls = [1_000, 5]
    const options = { jitter: 0, sweepInterval: 1e9, clock }
    Object.defineProperty(options, 'ttl', { enumerable: true, get: () => ttls[read++ % 2] })
    const table = createTable<string>(options)
    expect(read).toBe(1)
    await table.fetch('a', () => 'v')
    clock.set(999)
    expect(table.has('a')).toBe(true) // the first answer, 1,000, is the ttl
    clock.set(1_000)
    expect(table.has('a')).toBe(false)
    await table.close()
  })

  it('by fetch: each getter runs once', async () => {
    const table = createTable<string>({ clock: manualClock() })
    const reads: Record<string, number> = {}
    expect(await table.fetch('a', () => 'v', counted({ timeout: 100, softTimeout: 50, forceRefresh: false }, reads))).toBe('v')
    expect(reads).toEqual({ timeout: 1, softTimeout: 1, forceRefresh: 1 })
    await table.close()
  })

  it('by put: each getter runs once', async () => {
    const table = createTable<string>({ clock: manualClock() })
    const reads: Record<string, number> = {}
    expect(await table.put('a', 'v', counted({ version: 5, ttl: 100, tags: ['t'] }, reads))).toMatchObject({ applied: true, version: 5 })
    expect(reads).toEqual({ version: 1, ttl: 1, tags: 1 })
    await table.close()
  })
})
