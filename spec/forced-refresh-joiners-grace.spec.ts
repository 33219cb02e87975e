/**
 * Readers who join a forced refresh without forcing one themselves keep what grace promises them:
 * when the origin fails, the fail-safe answers them the graced value, and a soft timeout answers
 * them the graced value while the load goes on. The forced callers still get their loader's answer
 * or its error, never the value they asked to replace. Nor does a forced refresh take grace from the
 * readers of the flight it superseded: no change made their graced value stale.
 */
import { describe, expect, it } from 'vitest'
import { createTable, localBus, memoryL2 } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { advanceSettled, latchedLoader, outcome, settle } from './support/latch.js'

/** A table whose row `k` (`'graced'`) is past its ttl, within its grace. */
async function gracedRow(options: { softTimeout?: number } = {}) {
  const clock = manualClock(0)
  const table = createTable<string>({ name: 'joiners', ttl: 1_000, jitter: 0, grace: 60_000, sweepInterval: 1e9, loadTimeout: 10_000, clock, ...options })
  await table.fetch('k', () => 'graced')
  await advanceSettled(clock, 1_500)
  return { clock, table }
}

const down = new Error('origin down')

/**
 * Another process wrote `k` ('graced', now past its ttl, within its grace) to the L2 this cold
 * process shares; here a plain read started a flight (which read that graced entry) and a forced
 * refresh superseded it. Both loaders are held.
 */
async function supersededInColdProcess() {
  const clock = manualClock(0)
  const l2 = memoryL2({ clock })
  const options = { name: 'joiners', ttl: 1_000, jitter: 0, grace: 60_000, sweepInterval: 1e9, loadTimeout: 10_000, clock, l2 }
  const writer = createTable<string>(options)
  await writer.fetch('k', () => 'graced')
  clock.set(1_500)
  const cold = createTable<string>(options)
  const [superseded, refresh] = [latchedLoader<string>(), latchedLoader<string>()]
  const before = outcome(cold.fetch('k', superseded.loader))
  await settle()
  const forced = outcome(cold.fetch('k', refresh.loader, { forceRefresh: true }))
  await settle()
  return { writer, cold, superseded, refresh, before, forced }
}

describe('readers joining a forced refresh', () => {
  it('the origin fails: a plain joiner gets the graced value, the forced caller the error', async () => {
    const { table } = await gracedRow()
    const origin = latchedLoader<string>()
    const forced = outcome(table.fetch('k', origin.loader, { forceRefresh: true }))
    const plain = outcome(table.fetch('k', () => 'never'))
    await settle()
    origin.only().reject(down)
    await settle()
    expect(forced.error).toBe(down)
    expect(plain.value).toBe('graced')
    expect(table.stats()).toMatchObject({ failsafe: 1, stale_hits: 1, loads: 2 }) // the row's own load, and the refresh's
    await table.close()
  })

  it('the origin fails: a joiner with options gets the graced value, a forced one with options the error', async () => {
    const { table } = await gracedRow()
    const origin = latchedLoader<string>()
    const forced = outcome(table.fetch('k', origin.loader, { forceRefresh: true, timeout: 5_000 }))
    const joiner = outcome(table.fetch('k', () => 'never', { timeout: 5_000 }))
    await settle()
    origin.only().reject(down)
    await settle()
    expect(forced.error).toBe(down)
    expect(joiner.value).toBe('graced')
    await table.close()
  })

  it('the origin fails with no unforced caller: the forced one gets the error, and the fail-safe holds the origin off for plain reads', async () => {
    const { table } = await gracedRow()
    await expect(table.fetch('k', () => Promise.reject(down), { forceRefresh: true })).rejects.toBe(down)
    expect(table.stats()).toMatchObject({ failsafe: 1, load_errors: 1 })
    expect(await table.fetch('k', () => 'never')).toBe('graced') // the back-off: the origin is left alone
    expect(await table.fetch('k', () => 'forced again', { forceRefresh: true })).toBe('forced again') // a forced refresh is not held off
    await table.close()
  })

  it('the origin fails: a plain read made as the failure arrives gets the graced value, with no load of its own', async () => {
    const { table } = await gracedRow()
    const origin = latchedLoader<string>()
    const forced = outcome(table.fetch('k', origin.loader, { forceRefresh: true }))
    await settle()
    origin.only().reject(down)
    await Promise.resolve() // the failure is on its way to the owner
    const plain = outcome(table.fetch('k', () => 'never'))
    await settle()
    expect(forced.error).toBe(down)
    expect(plain.value).toBe('graced')
    expect(table.stats()).toMatchObject({ loads: 2, flights: 2, stale_hits: 1 }) // the row's own load, and the refresh's
    await table.close()
  })

  it('in a process whose L1 is cold: a plain joiner gets the graced entry L2 holds, from the fail-safe and from a soft timeout', async () => {
    for (const passes of ['fail-safe', 'soft timeout'] as const) {
      const clock = manualClock(0)
      const l2 = memoryL2({ clock })
      const options = { name: 'joiners', ttl: 1_000, jitter: 0, grace: 60_000, softTimeout: 50, sweepInterval: 1e9, loadTimeout: 10_000, clock, l2 }
      const writer = createTable<string>(options)
      await writer.fetch('k', () => 'graced')
      clock.set(1_500)
      const cold = createTable<string>(options)
      const origin = latchedLoader<string>()
      const forced = outcome(cold.fetch('k', origin.loader, { forceRefresh: true }))
      const plain = outcome(cold.fetch('k', () => 'never'))
      await settle()
      if (passes === 'soft timeout') {
        await advanceSettled(clock, 60)
        expect(plain.value).toBe('graced')
        expect(forced.state).toBe('pending')
      }
      origin.only().reject(down)
      await settle()
      expect(forced.error).toBe(down)
      expect(plain.value).toBe('graced')
      await Promise.all([writer.close(), cold.close()])
    }
  })

  it("the table's soft timeout passes: the plain joiner gets the graced value, the forced caller waits for its loader", async () => {
    const { clock, table } = await gracedRow({ softTimeout: 50 })
    const origin = latchedLoader<string>()
    const forced = outcome(table.fetch('k', origin.loader, { forceRefresh: true }))
    const plain = outcome(table.fetch('k', () => 'never'))
    await settle()
    await advanceSettled(clock, 100)
    expect(plain.value).toBe('graced')
    expect(forced.state).toBe('pending')
    const late = outcome(table.fetch('k', () => 'never'))
    const lateForced = outcome(table.fetch('k', () => 'never', { forceRefresh: true }))
    await settle()
    expect(late.value).toBe('graced')
    expect(lateForced.state).toBe('pending')
    origin.only().resolve('fresh')
    await settle()
    expect([forced.value, lateForced.value]).toEqual(['fresh', 'fresh'])
    expect(table.peek('k')).toBe('fresh')
    await table.close()
  })

  it("a joiner's own soft timeout passes: it gets the graced value, a forced caller's own does not answer it", async () => {
    const { clock, table } = await gracedRow()
    const origin = latchedLoader<string>()
    const forced = outcome(table.fetch('k', origin.loader, { forceRefresh: true, softTimeout: 50 }))
    const joiner = outcome(table.fetch('k', () => 'never', { softTimeout: 50 }))
    await settle()
    await advanceSettled(clock, 100)
    expect(joiner.value).toBe('graced')
    expect(forced.state).toBe('pending')
    origin.only().resolve('fresh')
    await settle()
    expect(forced.value).toBe('fresh')
    await table.close()
  })
})

describe('readers of a flight a forced refresh superseded', () => {
  for (const coalescing of [true, false]) {
    it(`its loader fails: they get the graced value, as no change made it stale (coalescing ${coalescing ? 'on' : 'off'})`, async () => {
      const { table } = await gracedRow()
      table.setCoalescing(coalescing)
      const [superseded, refresh] = [latchedLoader<string>(), latchedLoader<string>()]
      const before = outcome(table.fetch('k', superseded.loader))
      await settle()
      const forced = outcome(table.fetch('k', refresh.loader, { forceRefresh: true }))
      await settle()
      superseded.only().reject(down)
      await settle()
      expect(before.value).toBe('graced')
      refresh.only().resolve('fresh')
      await settle()
      expect(forced.value).toBe('fresh')
      expect(table.peek('k')).toBe('fresh')
      await table.close()
    })
  }

  it('a tag of its row is invalidated after the refresh: its loader fails, and they get the error (a change beats grace)', async () => {
    const clock = manualClock(0)
    const table = createTable<string>({ name: 'joiners', ttl: 1_000, jitter: 0, grace: 60_000, sweepInterval: 1e9, loadTimeout: 10_000, clock })
    await table.fetch('k', (_id, context) => (context.setTags(['shelf']), 'graced'))
    await advanceSettled(clock, 1_500)
    const [superseded, refresh] = [latchedLoader<string>(), latchedLoader<string>()]
    const before = outcome(table.fetch('k', superseded.loader))
    await settle()
    const forced = outcome(table.fetch('k', refresh.loader, { forceRefresh: true }))
    await settle()
    await table.invalidateTags(['shelf'])
    superseded.only().reject(down)
    await settle()
    expect(before.error).toBe(down)
    refresh.only().resolve('fresh')
    await settle()
    expect(forced.value).toBe('fresh')
    await table.close()
  })

  it('the table is cleared after the refresh: its loader fails, and they get the error, not the graced entry it read from L2 before', async () => {
    const { writer, cold, superseded, refresh, before, forced } = await supersededInColdProcess()
    await cold.clear()
    superseded.only().reject(down)
    await settle()
    expect(before.error).toBe(down)
    refresh.only().resolve('fresh')
    await settle()
    expect(forced.value).toBe('fresh')
    await Promise.all([writer.close(), cold.close()])
  })

  it('its loader fails after the refresh left no row: they get the graced value, but it is not stored, and a later read tries the origin', async () => {
    const { writer, cold, superseded, refresh, before, forced } = await supersededInColdProcess()
    refresh.only().context.setTtl(0) // the refresh's answer is not to be cached: no row, a tombstone in L2
    refresh.only().resolve('uncached')
    await settle()
    expect(forced.value).toBe('uncached')
    superseded.only().reject(down)
    await settle()
    expect(before.value).toBe('graced')
    expect(cold.peek('k')).toBeUndefined()
    expect(await cold.fetch('k', () => 'loaded')).toBe('loaded') // no back-off held it off
    await Promise.all([writer.close(), cold.close()])
  })

  it("it waits on another process's lease: it takes that process's fill, with no load of its own", async () => {
    const clock = manualClock(0)
    const l2 = memoryL2({ clock })
    const bus = localBus()
    const options = { name: 'joiners', ttl: 10_000, jitter: 0, sweepInterval: 1e9, loadTimeout: 10_000, clock, l2, bus, lease: { ttl: 3_000, wait: 6_000 } }
    const [holder, waiter] = [createTable<string>(options), createTable<string>(options)]
    const [holderOrigin, waiterOrigin, refresh] = [latchedLoader<string>(), latchedLoader<string>(), latchedLoader<string>()]
    const held = outcome(holder.fetch('k', holderOrigin.loader))
    await settle()
    const before = outcome(waiter.fetch('k', waiterOrigin.loader)) // waits on the holder's lease
    await settle()
    const forced = outcome(waiter.fetch('k', refresh.loader, { forceRefresh: true }))
    await settle()
    holderOrigin.only().resolve('filled')
    for (let i = 0; i < 5; i++) await settle()
    expect([held.value, before.value]).toEqual(['filled', 'filled'])
    expect(waiterOrigin.calls).toHaveLength(0)
    refresh.only().resolve('forced')
    await settle()
    expect(forced.value).toBe('forced')
    await Promise.all([holder.close(), waiter.close()])
  })

  it("it waits on another process's lease that runs out: it loads on its own without the lease, so a third process takes it and loads at once", async () => {
    const clock = manualClock(0)
    const l2 = memoryL2({ clock })
    const bus = localBus()
    const options = { name: 'joiners', ttl: 10_000, jitter: 0, sweepInterval: 1e9, loadTimeout: 10_000, clock, l2, bus, lease: { ttl: 3_000, wait: 6_000 } }
    const [holder, waiter, third] = [createTable<string>(options), createTable<string>(options), createTable<string>(options)]
    const [holderOrigin, waiterOrigin, refresh, thirdOrigin] = [latchedLoader<string>(), latchedLoader<string>(), latchedLoader<string>(), latchedLoader<string>()]
    void outcome(holder.fetch('k', holderOrigin.loader)) // takes the lease; its loader stalls
    await settle()
    const before = outcome(waiter.fetch('k', waiterOrigin.loader)) // waits on that lease
    await settle()
    const forced = outcome(waiter.fetch('k', refresh.loader, { forceRefresh: true }))
    await settle()
    await advanceSettled(clock, 3_500) // the holder's lease runs out: the superseded waiter looks again
    expect(waiterOrigin.calls).toHaveLength(1)
    const late = outcome(third.fetch('k', thirdOrigin.loader))
    await settle()
    expect(thirdOrigin.calls).toHaveLength(1) // the lease was free to take
    waiterOrigin.only().resolve('own load')
    thirdOrigin.only().resolve('third')
    refresh.only().resolve('forced')
    holderOrigin.only().resolve('late holder')
    await settle()
    expect([before.value, forced.value, late.value]).toEqual(['own load', 'forced', 'third'])
    await Promise.all([holder.close(), waiter.close(), third.close()])
  })

  it('its loader fails after the refresh stored a fresh row: they get that fresh value, which no stale answer is counted for', async () => {
    const table = createTable<string>({ name: 'joiners', ttl: 1_000, jitter: 0, grace: 60_000, sweepInterval: 1e9, loadTimeout: 10_000, clock: manualClock(0) })
    const stale: number[] = []
    table.events.on('stale', (event) => stale.push(event.staleness))
    const [superseded, refresh] = [latchedLoader<string>(), latchedLoader<string>()]
    const before = outcome(table.fetch('k', superseded.loader))
    await settle()
    const forced = outcome(table.fetch('k', refresh.loader, { forceRefresh: true }))
    await settle()
    refresh.only().resolve('fresh')
    await settle()
    superseded.only().reject(down)
    await settle()
    expect([before.value, forced.value]).toEqual(['fresh', 'fresh'])
    expect(table.stats()).toMatchObject({ stale_hits: 0, load_errors: 1 })
    expect(stale).toEqual([])
    await table.close()
  })
})
