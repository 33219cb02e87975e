/**
 * Hostile input is refused up front, with a clear error, as a rejected promise (or a throw where
 * the API throws), and never leaves anything pending: ids past the one length limit every layer
 * shares, option values outside what every layer can hold, options objects that throw when read,
 * a `random` that answers nonsense, and a loader that fetches its own id.
 */
import { describe, expect, it } from 'vitest'
import { MAX_ID_LENGTH, MAX_TTL } from '../src/limits.js'
import { LoadTimeoutError, SelfFetchError, createTable, localBus, memoryL2 } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { outcome, settle } from './support/latch.js'

describe('ids longer than every layer accepts', () => {
  it('are refused by fetch, put and invalidate with a RangeError that shows a cut id, not all of it', async () => {
    const table = createTable<string>({ clock: manualClock() })
    const long = 'x'.repeat(MAX_ID_LENGTH + 1)
    const errors = [
      await table.fetch(long, () => 'v').catch((e: unknown) => e),
      await table.fetch(long, () => 'v', { timeout: 10 }).catch((e: unknown) => e),
      await table.put(long, 'v').catch((e: unknown) => e),
      await table.invalidate(long).catch((e: unknown) => e),
    ]
    for (const error of errors) {
      expect(error).toBeInstanceOf(RangeError)
      expect((error as Error).message).toMatch(/id is longer than 16384 characters \(got 16385\)/)
      expect((error as Error).message.length).toBeLessThan(300)
    }
    expect(table.stats()).toMatchObject({ hits: 0, misses: 0, size: 0 })
    await table.close()
  })

  it('an id at the limit goes through L1, L2 and the bus', async () => {
    const clock = manualClock()
    const l2 = memoryL2({ clock })
    const bus = localBus()
    const [a, b] = [createTable<string>({ name: 't', clock, l2, bus }), createTable<string>({ name: 't', clock, l2, bus })]
    const id = '\u0001'.repeat(MAX_ID_LENGTH) // 6 bytes of JSON each: the widest id on the wire
    expect(await a.fetch(id, () => 'a1')).toBe('a1')
    expect(await b.put(id, 'b2')).toMatchObject({ applied: true, l2: 'written', broadcast: true })
    expect(a.stats().coh_applied).toBe(1)
    expect(await a.fetch(id, () => 'never')).toBe('b2')
    await Promise.all([a.close(), b.close()])
  })
})

describe('options outside what every layer holds', () => {
  it.each([
    [{ ttl: 9e15 }, /"ttl" must be a number of ms in \[1, 31536000000\]/],
    [{ ttl: 1e-300 }, /"ttl"/],
    [{ negativeTtl: 9e15 }, /"negativeTtl" must be 0 \(no negative rows\) or a number of ms in \[1, 31536000000\]/],
    [{ negativeTtl: 0.5 }, /"negativeTtl"/],
    [{ sweepInterval: 1e-300 }, /"sweepInterval" must be a number of ms in \[1, /],
    [{ loadTimeout: 0.1 }, /"loadTimeout"/],
    [{ capacity: 2 ** 31 }, /"capacity" must be an integer in \[1, 1073741824\]/],
    [{ random: () => Number.NaN }, /"random" must return a number in \[0, 1\) when called, got NaN/],
    [{ random: () => 1 }, /"random"/],
  ])('%o is refused: %s', (options, message) => {
    expect(() => createTable(options as never)).toThrow(RangeError)
    expect(() => createTable(options as never)).toThrow(message)
  })

  it('a random that throws is refused naming the option; one that goes bad later yields the band’s middle', async () => {
    expect(() =>
      createTable({
        random: () => {
          throw new Error('no entropy')
        },
      }),
    ).toThrow(/option "random" threw when called \(no entropy\)/)
    let draws = 0
    const clock = manualClock(0)
    const table = createTable<string>({ clock, ttl: 1_000, jitter: 0.5, random: () => (draws++ === 0 ? 0.3 : Number.NaN), sweepInterval: 1e9 })
    await table.fetch('k', () => 'v') // its expiry drew NaN: the middle of the band, 1,000 ms
    clock.set(999)
    expect(await table.fetch('k', () => 'reloaded')).toBe('v')
    clock.set(1_000)
    expect(await table.fetch('k', () => 'reloaded')).toBe('reloaded')
    expect(MAX_TTL).toBe(31_536_000_000)
    await table.close()
  })
})

describe('an options object that throws when read', () => {
  it('rejects the fetch with a TypeError naming the option, the thrown error as its cause; throws nothing synchronously, starts nothing', async () => {
    const table = createTable<string>({ clock: manualClock() })
    const getter = Object.defineProperty({}, 'signal', {
      get() {
        throw new Error('hostile getter')
      },
    })
    const proxy = new Proxy(
      {},
      {
        get() {
          throw new Error('hostile proxy')
        },
      },
    )
    let loads = 0
    const loader = () => (loads++, 'v')
    let fromGetter: Promise<unknown> | undefined
    let fromProxy: Promise<unknown> | undefined
    expect(() => (fromGetter = table.fetch('k', loader, getter as never))).not.toThrow()
    expect(() => (fromProxy = table.fetch('k', loader, proxy as never))).not.toThrow()
    const [byGetter, byProxy] = [await fromGetter!.catch((e: unknown) => e), await fromProxy!.catch((e: unknown) => e)]
    expect(byGetter).toBeInstanceOf(TypeError)
    expect(byGetter).toMatchObject({ code: 'ECHOSTORE_BAD_ARGUMENT', message: 'echostore: fetch("k"): option "signal" could not be read (hostile getter)' })
    expect((byGetter as Error).cause).toEqual(new Error('hostile getter'))
    expect(byProxy).toMatchObject({ code: 'ECHOSTORE_BAD_ARGUMENT', message: 'echostore: fetch("k"): option "signal" could not be read (hostile proxy)' })
    expect(loads).toBe(0)
    expect(table.stats()).toMatchObject({ misses: 0, inflight: 0 })
    await table.close()
  })
})

describe('a loader that fetches its own id', () => {
  it('is refused at once with SelfFetchError, and the outer fetch goes on', async () => {
    const table = createTable<string>({ name: 'selfish', clock: manualClock() })
    let inner: Promise<string | undefined> | undefined
    const value = await table.fetch('k', (id) => {
      inner = table.fetch(id, () => 'never')
      return 'outer'
    })
    expect(value).toBe('outer')
    const error = await inner!.catch((e: unknown) => e)
    expect(error).toBeInstanceOf(SelfFetchError)
    expect((error as Error).message).toMatch(/the loader of "k" on table "selfish" fetched "k" from the same table/)
    expect(table.stats()).toMatchObject({ misses: 1, flights: 1, coalesced: 0, loads: 1, inflight: 0 })
    await table.close()
  })

  it('other ids and other tables are fetched as usual from inside a loader', async () => {
    const clock = manualClock()
    const [a, b] = [createTable<string>({ name: 'a', clock }), createTable<string>({ name: 'b', clock })]
    const value = await a.fetch('k', async (id) => `${await a.fetch('other', () => 'o')}+${await b.fetch(id, () => 'b')}`)
    expect(value).toBe('o+b')
    await Promise.all([a.close(), b.close()])
  })

  // Detecting a self-fetch made after the loader awaited needs async context tracking, which costs
  // about 30 % of a cold miss: it is documented, and loadTimeout bounds it.
  it('after an await, it waits on its own flight until loadTimeout, and both settle', async () => {
    const clock = manualClock()
    const table = createTable<string>({ clock, loadTimeout: 1_000 })
    let inner: ReturnType<typeof outcome<string | undefined>> | undefined
    const outer = outcome(
      table.fetch('k', async (id) => {
        await Promise.resolve()
        const pending = table.fetch(id, () => 'never')
        inner = outcome(pending)
        return pending
      }),
    )
    await settle()
    clock.advance(999)
    await settle()
    expect(outer.state).toBe('pending') // it waits on its own flight
    expect(inner!.state).toBe('pending')
    clock.advance(1)
    await settle()
    expect(outer.state).toBe('rejected')
    expect(inner!.state).toBe('rejected')
    expect(outer.error).toBeInstanceOf(LoadTimeoutError)
    expect(inner!.error).toBeInstanceOf(LoadTimeoutError)
    expect(table.stats().inflight).toBe(0)
    await table.close()
  })
})
