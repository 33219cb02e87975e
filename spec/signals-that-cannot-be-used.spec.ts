/**
 * A signal that cannot be used (a hostile subclass whose members throw) refuses its own fetch with a
 * TypeError naming the option, before the read is counted or anything loads; one that only fails to
 * stop listening later holds up no other caller of its flight. A many-read's options are read once,
 * for every id: a refusal refuses the whole call before any id is read.
 */
import { describe, expect, it } from 'vitest'
import { createTable } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { latchedLoader, outcome, settle } from './support/latch.js'

/** A live signal whose `member` throws while `failing()` says so (always, by default). */
function hostileSignal(member: 'addEventListener' | 'removeEventListener', failing: () => boolean = () => true): AbortSignal {
  const signal = new AbortController().signal
  const real = signal[member].bind(signal)
  Object.defineProperty(signal, member, {
    value: (...args: Parameters<AbortSignal['addEventListener']>) => {
      if (failing()) throw new Error(`no ${member}`)
      return real(...args)
    },
  })
  return signal
}

const COUNTED = ['hits', 'misses', 'flights', 'coalesced', 'loads', 'cancelled', 'abandoned', 'inflight'] as const

describe('a signal that cannot be used', () => {
  for (const member of ['addEventListener', 'removeEventListener'] as const) {
    it(`whose ${member} throws refuses its fetch with a TypeError naming the option, counted as neither hit nor miss, loading nothing`, async () => {
      const table = createTable<string>({ clock: manualClock(0) })
      let loads = 0
      const refused = await table.fetch('k', () => (loads++, 'v'), { signal: hostileSignal(member) }).catch((error: unknown) => error)
      expect(refused).toBeInstanceOf(TypeError)
      expect(refused).toMatchObject({ code: 'ECHOSTORE_BAD_ARGUMENT', message: `echostore: fetch("k") option "signal" could not be used (no ${member})` })
      await settle()
      expect(loads).toBe(0)
      const stats = table.stats()
      for (const counter of COUNTED) expect(stats[counter], counter).toBe(0)
      expect(table.peek('k')).toBeUndefined()
      await table.close()
    })
  }

  it('one that fails to stop listening once its caller is answered holds up no other caller of the flight', async () => {
    const table = createTable<string>({ clock: manualClock(0) })
    const loader = latchedLoader<string>()
    const plain = outcome(table.fetch('k', loader.loader))
    await settle()
    // Usable when the fetch is made and the owner listens to it, failing when the caller is answered.
    let answering = false
    const hostile = outcome(table.fetch('k', loader.loader, { signal: hostileSignal('removeEventListener', () => answering) }))
    const after = outcome(table.fetch('k', loader.loader, { signal: new AbortController().signal }))
    await settle()
    answering = true
    loader.only().resolve('v')
    await settle()
    expect([plain.value, hostile.value, after.value]).toEqual(['v', 'v', 'v'])
    expect(table.stats()).toMatchObject({ flights: 1, coalesced: 2, inflight: 0 })
    await table.close()
  })
})

describe("a many-read's options", () => {
  it('are read once for every id, however many ids miss', async () => {
    const table = createTable<string>({ clock: manualClock(0), batchLoader: (ids) => ids.map((id) => `v${id}`) })
    const reads: Record<string, number> = {}
    const counted = new Proxy({ timeout: 1_000 } as Record<string, unknown>, {
      get: (target, key) => ((reads[String(key)] = (reads[String(key)] ?? 0) + 1), target[key as string]),
    })
    expect(await table.getMany(['x', 'y', 'z'], counted)).toEqual(['vx', 'vy', 'vz'])
    expect(reads).toEqual({ signal: 1, timeout: 1, softTimeout: 1, forceRefresh: 1 })
    await table.close()
  })

  for (const call of ['getMany', 'fetchMany'] as const) {
    it(`${call}: an option whose second read would throw is read once, so the call goes on; refused for a bad option or a signal that cannot be used, it reads no id, loads nothing and names the call`, async () => {
      let asked = 0
      const batchLoader = (ids: readonly string[]) => (asked++, ids.map((id) => `v${id}`))
      const table = createTable<string>({ clock: manualClock(0), batchLoader })
      let reads = 0
      const oneShot = {
        get timeout() {
          if (reads++ > 0) throw new Error('read twice')
          return 1_000
        },
      }
      const read = (options: object) => (call === 'getMany' ? table.getMany(['a', 'b'], options) : table.fetchMany(['a', 'b'], batchLoader, options))
      // Read once, the one-shot option is good: the call goes on.
      expect(await read(oneShot)).toEqual(['va', 'vb'])
      await table.invalidate('a')
      await table.invalidate('b')
      const loadsBefore = asked
      const before = table.stats()
      const badTimeout = await read({ timeout: -1 }).catch((error: unknown) => error)
      expect(badTimeout).toBeInstanceOf(RangeError)
      expect((badTimeout as Error).message).toBe(`echostore: ${call}(ids) option "timeout" must be a number of ms in (0, 2147483647], got -1`)
      const badSignal = await read({ signal: hostileSignal('addEventListener') }).catch((error: unknown) => error)
      expect((badSignal as Error).message).toBe(`echostore: ${call}(ids) option "signal" could not be used (no addEventListener)`)
      await settle()
      expect(asked).toBe(loadsBefore)
      expect(table.stats()).toMatchObject({ hits: before.hits, misses: before.misses, loads: before.loads })
      expect([table.peek('a'), table.peek('b')]).toEqual([undefined, undefined])
      await table.close()
    })
  }
})
