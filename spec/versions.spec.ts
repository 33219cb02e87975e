/**
 * Versions that never collide: a change without a version takes one above every version known for
 * the id and no lower than the clock's (milliseconds × 1,024), minted by L2's script when L2 answers;
 * an equal version from another origin drops the row; every version that enters (a put, a loader's
 * report, a bus message, an L2 header) is bounded by 2^52.
 */
import { describe, expect, it } from 'vitest'
import { MAX_VERSION } from '../src/limits.js'
import { type BatchLoaderContext, createTable, localBus, memoryL2 } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { chaosL2 } from '../src/testing.js'
import { clockVersion, mintVersion } from '../src/core/versions.js'

const NAME = 'versions'
/** A wall-clock-like start, so clock versions are real-sized. */
const T0 = 1_800_000_000_000

function world(start = 0) {
  const clock = manualClock(start)
  const l2 = chaosL2(memoryL2({ clock }), clock)
  const bus = localBus()
  const make = (options: { l2?: false } = {}) => createTable<string>({ name: NAME, clock, bus, ...(options.l2 === false ? {} : { l2 }) })
  return { clock, l2, bus, make }
}

describe('minting', () => {
  it('is above every version known and no lower than the clock version, and at least 1', () => {
    expect(mintVersion(-1, 0)).toBe(1)
    expect(mintVersion(7, 0)).toBe(8)
    expect(mintVersion(-1, T0)).toBe(T0 * 1_024)
    expect(mintVersion(T0 * 1_024 + 5, T0)).toBe(T0 * 1_024 + 6)
    expect(clockVersion(T0 + 0.9)).toBe(T0 * 1_024)
    expect(mintVersion(MAX_VERSION, T0)).toBeUndefined()
  })

  it('one writer’s changes only grow, and a later change by a writer that never held the id is above an earlier one', async () => {
    const { clock, l2, make } = world(T0)
    const [a, b, c] = [make(), make(), make({ l2: false })]
    const first = await b.put('k', 'b1')
    expect(first.version).toBeGreaterThanOrEqual(T0 * 1_024)
    const second = await b.put('k', 'b2')
    expect(second.version).toBeGreaterThan(first.version)
    expect(await a.fetch('k', () => 'never')).toBe('b2')
    clock.advance(5)
    l2.fail('all', { kind: 'throw' })
    const third = await c.put('k', 'c3') // no L2, never held the id: a clock version, 5 ms later
    expect(third.version).toBeGreaterThan(second.version)
    expect(a.stats().coh_applied).toBeGreaterThanOrEqual(1)
    l2.heal()
    await Promise.all([a.close(), b.close(), c.close()])
  })
})

describe('a retried change while L2 was down', () => {
  // Before, the second change took its version from L2's counter, which never learned the first:
  // both carried the same version, and A kept serving its first value.
  it('carries a larger version than the failed one, so every peer applies it', async () => {
    const { l2, make } = world()
    const [a, b] = [make(), make()]
    expect(await a.fetch('k', () => 'a1')).toBe('a1')
    l2.fail('all', { kind: 'throw' })
    const failed = await b.invalidate('k')
    expect(failed).toMatchObject({ applied: true, l2: 'failed', broadcast: true })
    l2.heal()
    expect(await a.fetch('k', () => 'a1 again')).toBe('a1 again')
    const retried = await b.put('k', 'b2')
    expect(retried).toMatchObject({ applied: true, l2: 'written', broadcast: true })
    expect(retried.version).toBeGreaterThan(failed.version)
    expect(await a.fetch('k', () => 'never')).toBe('b2')
    await Promise.all([a.close(), b.close()])
  })

  // Two writers that never met can still mint one version while L2 is down (same clock instant):
  // the receiver cannot tell the changes apart, so it drops its row rather than keep the old one.
  it('an equal version from another writer drops the row instead of keeping the old value', async () => {
    const { l2, make } = world()
    const [a, b, c] = [make(), make(), make()]
    await b.put('k', 'b1') // version 1, held by A once it reads it
    expect(await a.fetch('k', () => 'never')).toBe('b1')
    l2.fail('all', { kind: 'throw' })
    const other = await c.put('k', 'c1') // C never held k: it mints 1 too
    expect(other.version).toBe(1)
    let origin = 'c1'
    expect(await a.fetch('k', () => origin)).toBe('c1')
    origin = 'unused'
    l2.heal()
    await Promise.all([a.close(), b.close(), c.close()])
  })
})

describe('versions are bounded by 2^52 wherever they enter', () => {
  it('a put or invalidate with a version above it is refused, naming the bound', async () => {
    const table = createTable<string>({ name: NAME, clock: manualClock() })
    for (const version of [MAX_VERSION + 1, Number.MAX_SAFE_INTEGER, 2 ** 53]) {
      await expect(table.put('k', 'v', { version })).rejects.toThrow(RangeError)
      await expect(table.invalidate('k', { version })).rejects.toThrow(/must be an integer in \[0, 4503599627370496\]/)
    }
    expect(await table.put('k', 'v', { version: MAX_VERSION })).toMatchObject({ applied: true, version: MAX_VERSION })
    // Nothing is above it: a change without a version is refused rather than reported applied.
    await expect(table.put('k', 'w')).rejects.toThrow(/already holds version 4503599627370496, the largest there is/)
    expect(await table.fetch('k', () => 'never')).toBe('v')
    await table.close()
  })

  it('a loader reporting a version above it fails its fetch with a RangeError, and stores nothing', async () => {
    const table = createTable<string>({ name: NAME, clock: manualClock() })
    await expect(table.fetch('k', (_id, context) => (context.setVersion(Number.MAX_SAFE_INTEGER), 'v'))).rejects.toThrow(RangeError)
    expect(table.stats()).toMatchObject({ size: 0, load_errors: 1 })
    await table.close()
  })

  it('a bus message above it is invalid, changes nothing, and later changes still go out', async () => {
    const bus = localBus()
    const deliveries: ((delivery: unknown) => void)[] = []
    const hand = { publish: bus.publish, close: bus.close, subscribe: (handler: (delivery: unknown) => void) => (deliveries.push(handler), () => {}) }
    const table = createTable<string>({ name: NAME, clock: manualClock(), bus: hand as never })
    await table.put('k', 'v1')
    deliveries[0]!({ type: 'message', message: { table: NAME, id: 'k', version: Number.MAX_SAFE_INTEGER, kind: 'invalidate', origin: 'elsewhere' } })
    expect(table.stats()).toMatchObject({ coh_invalid: 1, coh_applied: 0 })
    expect(await table.fetch('k', () => 'never')).toBe('v1')
    expect(await table.put('k', 'v2')).toMatchObject({ applied: true, version: 2 })
    await table.close()
    await bus.close()
  })
})

describe('versions of two sources: the data’s own and minted ones', () => {
  /** Two processes on one L2 and no bus, on a wall-clock-like clock; the table is fed with the data's versions (1001, 1002, …). */
  function fedWithDataVersions() {
    const clock = manualClock(T0)
    const l2 = memoryL2({ clock })
    const make = () => createTable<string>({ name: NAME, clock, l2, sweepInterval: 1e9 })
    return { clock, l2, make }
  }

  it('a change without a version, where the id holds a data version, takes the next one in the data’s order: later data versions still cache', async () => {
    const { make } = fedWithDataVersions()
    const table = make()
    expect(await table.put('k', 'v1001', { version: 1001 })).toMatchObject({ applied: true, version: 1001 })
    expect(await table.invalidate('k')).toMatchObject({ applied: true, version: 1002, l2: 'written' })
    expect(await table.put('k', 'v1002', { version: 1002 })).toMatchObject({ applied: true, version: 1002, l2: 'written' })
    expect(await table.invalidate('k')).toMatchObject({ applied: true, version: 1003 })
    let origin = 0
    const loader = (_id: unknown, { setVersion }: { setVersion(version: number): void }) => (origin++, setVersion(1003), 'v1003')
    for (let i = 0; i < 3; i++) expect(await table.fetch('k', loader)).toBe('v1003')
    expect(origin).toBe(1)
    expect(table.has('k')).toBe(true)
    expect(await make().fetch('k', () => 'never')).toBe('v1003') // in L2 too
    await table.close()
  })

  it('a data version below a minted one (a process that did not know the id minted it) is refused loudly: by put, invalidate and a loader’s setVersion', async () => {
    const { make } = fedWithDataVersions()
    const [fed, cold] = [make(), make()]
    expect(await fed.put('k', 'v1001', { version: 1001 })).toMatchObject({ applied: true })
    const minted = await cold.invalidate('k') // knows nothing of k: a clock version, above the data's
    expect(minted.version).toBeGreaterThanOrEqual(T0 * 1_024)
    const mixed = /version 1002 is the data's own, but the id holds version \d+, minted by a change without a version .* give every change of this table a version/
    await expect(fed.put('k', 'v1002', { version: 1002 })).rejects.toThrow(mixed) // L2 refuses it: the holder's version is read
    await expect(cold.put('k', 'v1002', { version: 1002 })).rejects.toThrow(mixed) // its own tombstone holds it
    await expect(cold.invalidate('k', { version: 1002 })).rejects.toThrow(RangeError)
    await expect(cold.fetch('k', (_id, { setVersion }) => (setVersion(1002), 'v1002'))).rejects.toThrow(mixed)
    await expect(cold.fetchMany(['k'], (ids, { setVersion }) => (setVersion('k', 1002), ids.map(() => 'v1002')))).rejects.toThrow(mixed) // a batch loader's too
    expect(cold.stats()).toMatchObject({ load_errors: 2, size: 1 }) // its tombstone only
    // A later minted change is above: it is applied.
    expect(await cold.put('k', 'minted')).toMatchObject({ applied: true, l2: 'written' })
    await Promise.all([fed.close(), cold.close()])
  })

  it('on a table without L2, a batch loader’s refused setVersion fails its id alone: the other ids are answered and stored, and nothing is left unhandled', async () => {
    const batchLoader = (ids: readonly string[], { setVersion }: BatchLoaderContext<string>) => {
      setVersion('a', 5)
      return ids.map((id) => `v-${id}`)
    }
    const table = createTable<string, string>({ name: 'no-l2', clock: manualClock(T0), jitter: 0, sweepInterval: 1e9, batchLoader })
    await table.invalidate('a') // a clock version, minted here: a data version below it is refused
    const answers = await Promise.allSettled([table.get('a'), table.get('b')]) // one batch call
    expect(answers[0]).toMatchObject({ status: 'rejected', reason: expect.objectContaining({ name: 'RangeError', message: expect.stringMatching(/version 5 is the data's own/) }) })
    expect(answers[1]).toEqual({ status: 'fulfilled', value: 'v-b' })
    expect(table.peek('b')).toBe('v-b')
    expect(table.stats()).toMatchObject({ batch_loads: 1, load_errors: 1, fills: 1, inflight: 0 })
    await table.close()
  })
})
