/**
 * A table bounded by weight (`maxSize` with `sizeOf`): the rows held never weigh more than
 * `maxSize`, a value heavier than it is answered and not stored, a heavy newcomer is admitted only
 * when it was asked for more often than all the rows it would displace, and a `sizeOf` that throws
 * or answers a bad number is counted and reported, never a hang.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { type Id, createTable, localBus, memoryL2 } from '../src/index.js'
import { manualClock } from '../src/testing.js'

/** A value of `weight` units: its length. */
const ofWeight = (weight: number): string => 'x'.repeat(weight)
const sizeOf = (value: string): number => value.length

describe('maxSize', () => {
  it('keeps the weight held at or under maxSize, and reports it in stats', async () => {
    const table = createTable<string, Id>({ maxSize: 100, sizeOf, clock: manualClock() })
    for (let i = 0; i < 50; i++) await table.fetch(i, () => ofWeight(10 + (i % 7) * 5))
    const { weight, size } = table.stats()
    expect(weight).toBeLessThanOrEqual(100)
    expect(weight).toBeGreaterThan(50)
    expect(size).toBeLessThan(50)
    await table.close()
  })

  it('answers a value heavier than maxSize and does not store it (heavy_skips)', async () => {
    const table = createTable<string, Id>({ maxSize: 100, sizeOf, clock: manualClock() })
    await table.fetch('small', () => ofWeight(10))
    expect(await table.fetch('big', () => ofWeight(101))).toHaveLength(101)
    expect(table.has('big')).toBe(false)
    expect(table.has('small')).toBe(true)
    expect(table.stats()).toMatchObject({ heavy_skips: 1, weight: 10, size: 1, evictions: 0 })
    await table.close()
  })

  it('refuses a heavy newcomer asked for less often than the rows it would displace together', async () => {
    const table = createTable<string, Id>({ maxSize: 100, sizeOf, clock: manualClock() })
    // Ten rows of 10, each asked for three times: the table is full by weight.
    for (let round = 0; round < 3; round++) for (let i = 0; i < 10; i++) await table.fetch(i, () => ofWeight(10), { forceRefresh: round > 0 })
    await table.fetch('heavy', () => ofWeight(50))
    expect(table.has('heavy')).toBe(false)
    expect(table.stats()).toMatchObject({ full_skips: 1, evictions: 0, weight: 100, size: 10 })
    await table.close()
  })

  it('admits a heavy newcomer asked for more often than all its victims together, evicting as many as it takes', async () => {
    const table = createTable<string, Id>({ maxSize: 100, sizeOf, clock: manualClock() })
    // Ten rows of 10, the first three asked for once since the filter counts (from half full on).
    for (let round = 0; round < 2; round++) for (let i = 0; i < 10; i++) await table.fetch(i, () => ofWeight(10), { forceRefresh: round > 0 })
    let loads = 0
    for (let i = 0; i < 12 && !table.has('heavy'); i++) await table.fetch('heavy', () => (loads++, ofWeight(30)))
    expect(table.stats()).toMatchObject({ evictions: 3, weight: 100, size: 8, full_skips: loads - 1 })
    expect(loads).toBeGreaterThan(3) // refused while the three rows it would displace, each asked for at least once, weighed as much as it
    await table.close()
  })

  it('capacity and maxSize together: the first bound reached binds', async () => {
    const byRows = createTable<string, Id>({ capacity: 3, maxSize: 1_000, sizeOf, clock: manualClock() })
    const byWeight = createTable<string, Id>({ capacity: 1_000, maxSize: 30, sizeOf, clock: manualClock() })
    for (const table of [byRows, byWeight]) {
      for (let round = 0; round < 4; round++) for (let i = 0; i < 10; i++) await table.fetch(i, () => ofWeight(10))
    }
    expect(byRows.stats().size).toBe(3)
    expect(byRows.stats().weight).toBe(30)
    expect(byWeight.stats().size).toBe(3)
    expect(byWeight.stats().weight).toBe(30)
    await Promise.all([byRows.close(), byWeight.close()])
  })

  it('a heavier value replacing an id’s row evicts other rows to stay within maxSize, never the row itself', async () => {
    const table = createTable<string, Id>({ maxSize: 100, sizeOf, clock: manualClock() })
    for (let i = 0; i < 10; i++) await table.fetch(i, () => ofWeight(10))
    await table.put(0, ofWeight(40))
    expect(await table.fetch(0, () => 'never')).toHaveLength(40)
    expect(table.stats()).toMatchObject({ weight: 100, size: 7, evictions: 3, full_skips: 0 })
    await table.put(0, ofWeight(5)) // lighter: nothing evicted, the weight follows
    expect(table.stats()).toMatchObject({ weight: 65, size: 7, evictions: 3 })
    await table.close()
  })

  it('a replacement heavier than maxSize drops the id’s old row: no stale value stays', async () => {
    const table = createTable<string, Id>({ maxSize: 100, sizeOf, clock: manualClock() })
    await table.fetch('a', () => ofWeight(10))
    await table.put('a', ofWeight(200))
    expect(table.peek('a')).toBeUndefined()
    expect(await table.fetch('a', () => 'fresh')).toBe('fresh')
    expect(table.stats()).toMatchObject({ heavy_skips: 1, weight: 5 })
    await table.close()
  })

  it('negative rows and tombstones weigh nothing, and sizeOf is never called for them', async () => {
    const weighed: unknown[] = []
    const table = createTable<string | undefined, Id>({
      maxSize: 100,
      sizeOf: (value) => (weighed.push(value), value.length),
      clock: manualClock(),
    })
    await table.fetch('none', () => undefined)
    await table.fetch('a', () => ofWeight(10))
    await table.invalidate('a', { version: 5 }) // a tombstone remembering version 5
    expect(weighed).toEqual([ofWeight(10)])
    expect(table.stats()).toMatchObject({ size: 2, weight: 0 })
    await table.close()
  })

  it('a graced row weighs until it is swept; a clear gives every unit back', async () => {
    const clock = manualClock(0)
    const table = createTable<string, Id>({ maxSize: 100, sizeOf, ttl: 100, jitter: 0, grace: 1_000, sweepInterval: 50, clock })
    await table.fetch('a', () => ofWeight(40))
    clock.advance(500) // expired, graced
    expect(table.stats().weight).toBe(40)
    clock.advance(2_000) // past its grace: swept
    expect(table.stats()).toMatchObject({ weight: 0, size: 0 })
    await table.fetch('b', () => ofWeight(30))
    await table.clear()
    expect(table.stats()).toMatchObject({ weight: 0, size: 0 })
    await table.close()
  })

  it('namespaces share the table’s maxSize, and sizeOf sees the row’s id', async () => {
    const ids: Id[] = []
    const table = createTable<string, Id>({ maxSize: 50, sizeOf: (value, id) => (ids.push(id), value.length), clock: manualClock() })
    const tenant = table.namespace('tenant')
    await table.fetch('a', () => ofWeight(30))
    await tenant.fetch('a', () => ofWeight(30))
    expect(table.stats().weight).toBeLessThanOrEqual(50)
    expect(ids[0]).toBe('a')
    expect(ids).toHaveLength(2)
    await table.close()
  })

  it('a sizeOf that throws or answers a bad number: the fetch is answered, the row not stored, sizeof_errors and an error event name it', async () => {
    const answers: unknown[] = [Number.NaN, -1, 1.5, '10', Infinity]
    let call = 0
    const table = createTable<string, Id>({
      maxSize: 100,
      sizeOf: () => {
        if (call === answers.length) throw new Error('cannot weigh')
        return answers[call++] as number
      },
      clock: manualClock(),
    })
    const errors: unknown[] = []
    table.events.on('error', ({ error }) => errors.push(error))
    for (let i = 0; i <= answers.length; i++) expect(await table.fetch(`id-${i}`, () => 'v')).toBe('v')
    expect(table.stats()).toMatchObject({ sizeof_errors: answers.length + 1, size: 0, weight: 0 })
    expect(errors).toHaveLength(answers.length + 1)
    expect((errors[0] as Error).message).toMatch(/option "sizeOf" returned NaN for id "id-0".*integer ≥ 0/)
    expect((errors.at(-1) as Error).message).toMatch(/option "sizeOf" threw \(cannot weigh\) for id "id-5"/)
    await table.put('put', 'v') // a put settles too, its value unstored (a tombstone keeps its version)
    expect(table.peek('put')).toBeUndefined()
    expect(table.stats()).toMatchObject({ sizeof_errors: answers.length + 2, weight: 0 })
    await table.close()
  })

  it('a change heard on the bus leaves a tombstone of weight 0 without calling sizeOf; the value is weighed when a read fills it from L2', async () => {
    const clock = manualClock(0)
    const l2 = memoryL2({ clock })
    const bus = localBus()
    const weighed: string[] = []
    const writer = createTable<string, Id>({ name: 't', l2, bus, clock })
    const reader = createTable<string, Id>({ name: 't', l2, bus, maxSize: 100, sizeOf: (value) => (weighed.push(value), value.length), clock })
    await reader.fetch('a', () => ofWeight(10))
    expect(weighed).toEqual([ofWeight(10)])
    expect(reader.stats()).toMatchObject({ weight: 10, size: 1 })
    await writer.put('a', ofWeight(60))
    await new Promise((resolve) => setImmediate(resolve))
    expect(reader.stats()).toMatchObject({ coh_applied: 1, weight: 0, size: 1 }) // the row is now a tombstone
    expect(reader.has('a')).toBe(false)
    expect(weighed).toEqual([ofWeight(10)]) // sizeOf was not called for the change
    let loads = 0
    expect(await reader.fetch('a', () => (loads++, 'never'))).toBe(ofWeight(60))
    expect(loads).toBe(0) // filled from the put's L2 entry
    expect(weighed).toEqual([ofWeight(10), ofWeight(60)])
    expect(reader.stats()).toMatchObject({ weight: 60, size: 1 })
    await Promise.all([writer.close(), reader.close()])
  })

  it('a sizeOf that throws on a replacement drops the id’s old row: a put or a forced refresh answers, and no stale value stays', async () => {
    let broken = false
    const table = createTable<string, Id>({
      maxSize: 100,
      sizeOf: (value) => {
        if (broken) throw new Error('cannot weigh')
        return value.length
      },
      clock: manualClock(),
    })
    await table.fetch('a', () => 'old')
    await table.fetch('b', () => 'old')
    expect(table.stats()).toMatchObject({ weight: 6, size: 2 })
    broken = true
    expect(await table.put('a', 'new')).toMatchObject({ applied: true })
    expect(table.peek('a')).toBeUndefined()
    expect(table.has('a')).toBe(false)
    expect(await table.fetch('b', () => 'fresh', { forceRefresh: true })).toBe('fresh')
    expect(table.peek('b')).toBeUndefined()
    expect(table.has('b')).toBe(false)
    expect(table.stats()).toMatchObject({ sizeof_errors: 2, weight: 0 })
    broken = false
    expect(await table.fetch('a', () => 'reloaded')).toBe('reloaded') // nothing left to answer: a load
    await table.close()
  })

  it('under any mix of fills, puts and invalidations of sizes over four orders of magnitude, the weight held never passes maxSize and equals the rows’ weights', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ id: fc.integer({ min: 0, max: 40 }), weight: fc.integer({ min: 0, max: 4 }), op: fc.constantFrom('fetch', 'put', 'invalidate') }), { maxLength: 200 }),
        async (steps) => {
          const table = createTable<string, Id>({ maxSize: 20_000, capacity: 30, sizeOf, clock: manualClock() })
          for (const { id, weight, op } of steps) {
            const value = ofWeight(2 * 10 ** weight)
            if (op === 'fetch') await table.fetch(id, () => value)
            else if (op === 'put') await table.put(id, value)
            else await table.invalidate(id)
            const { weight: held, size } = table.stats()
            expect(held).toBeLessThanOrEqual(20_000)
            expect(size).toBeLessThanOrEqual(30)
            let sum = 0
            for (let i = 0; i <= 40; i++) sum += table.peek(i)?.length ?? 0
            expect(held).toBe(sum)
          }
          await table.close()
        },
      ),
      { numRuns: 60 },
    )
  })
})

describe('maxSize and sizeOf options', () => {
  it('are refused with an error naming the option', () => {
    expect(() => createTable<string, Id>({ maxSize: 10 })).toThrow(/option "sizeOf" is required with "maxSize"/)
    expect(() => createTable<string, Id>({ sizeOf })).toThrow(/option "maxSize" is required with "sizeOf"/)
    expect(() => createTable<string, Id>({ maxSize: 0, sizeOf })).toThrow(RangeError)
    expect(() => createTable<string, Id>({ maxSize: 1.5, sizeOf })).toThrow(/option "maxSize" must be an integer/)
    expect(() => createTable<string, Id>({ maxSize: '10' as unknown as number, sizeOf })).toThrow(TypeError)
    expect(() => createTable<string, Id>({ maxSize: 10, sizeOf: 'length' as unknown as typeof sizeOf })).toThrow(/option "sizeOf" must be a function/)
  })
})

describe('sizeOf, whatever it throws or answers, and wherever it is asked', () => {
  const unprintable: [string, () => unknown][] = [
    [
      'throws a null-prototype object',
      () => {
        throw Object.create(null)
      },
    ],
    [
      'returns a revoked proxy',
      () => {
        const { proxy, revoke } = Proxy.revocable({}, {})
        revoke()
        return proxy
      },
    ],
  ]
  it.each(unprintable)('one that %s: the fetch is still answered, counted in sizeof_errors, and the error event says so', async (_, hostile) => {
    const table = createTable<string, Id>({ maxSize: 100, sizeOf: hostile as () => number, clock: manualClock() })
    const errors: unknown[] = []
    table.events.on('error', ({ error }) => errors.push(error))
    await expect(table.fetch('a', () => 'v')).resolves.toBe('v')
    expect(table.stats()).toMatchObject({ sizeof_errors: 1, inflight: 0, size: 0 })
    expect(String(errors[0])).toMatch(/option "sizeOf" (threw|returned) .* for id "a"/)
    await table.close()
  })

  it('in a namespace, is given the id the caller gave, as the loader is', async () => {
    const seenBySizeOf: unknown[] = []
    const seenByLoader: unknown[] = []
    const table = createTable<string, number>({ maxSize: 100, sizeOf: (value, id) => (seenBySizeOf.push(id), value.length), clock: manualClock() })
    await table.namespace('acme').fetch(7, (id) => (seenByLoader.push(id), 'abc'))
    expect(seenByLoader).toEqual([7])
    expect(seenBySizeOf).toEqual([7])
    await table.close()
  })

  it('the weight held never passes maxSize, even at maxSize = 2^53 − 1, where a sum rounds', async () => {
    const M = Number.MAX_SAFE_INTEGER
    const weights: Record<string, number> = { huge: M - 1, one: 1, two: 2 }
    const table = createTable<string, string>({ maxSize: M, sizeOf: (value) => weights[value]!, clock: manualClock() })
    await table.put('k', 'huge')
    await table.put('j', 'one')
    expect(table.stats()).toMatchObject({ weight: M, size: 2 })
    await table.put('j', 'two') // 'j' grows by 1: M − 1 + 2 does not fit, and must not seem to
    expect(table.stats().weight).toBeLessThanOrEqual(M)
    await table.close()
  })
})
