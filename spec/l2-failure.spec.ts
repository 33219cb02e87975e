import { describe, expect, it } from 'vitest'
import { BREAKER_COOLDOWN, BREAKER_FAILURES, DEFAULT_L2_TIMEOUT } from '../src/limits.js'
import { createTable, memoryL2 } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { chaosL2 } from '../src/testing.js'
import { outcome, settle } from './support/latch.js'

function setup() {
  const clock = manualClock(0)
  const l2 = chaosL2(memoryL2({ clock }), clock)
  const table = createTable<string>({ name: 't', ttl: 60_000, clock, l2, sweepInterval: 1e9 })
  return { clock, l2, table }
}

describe('L2 failure never fails a fetch', () => {
  it('a throwing L2 (sync or async) falls through to the loader; the write failure still answers the waiters', async () => {
    const { l2, table } = setup()
    l2.fail('all', { kind: 'throw', sync: true })
    expect(await table.fetch('a', () => 'A')).toBe('A')
    l2.fail('all', { kind: 'throw' })
    expect(await table.fetch('b', () => 'B')).toBe('B')
    expect(table.stats()).toMatchObject({ l2_errors: 4, loads: 2, fills: 2, l2_hits: 0 })
    l2.heal()
    await table.close()
  })

  it('a stalled L2 is given up after its timeout on the table’s clock; the loader answers; nothing is left pending', async () => {
    const { clock, l2, table } = setup()
    l2.fail('get', { kind: 'stall' })
    let loads = 0
    const answer = outcome(table.fetch('k', () => (loads++, 'from origin')))
    await settle()
    expect(loads).toBe(0)
    clock.advance(DEFAULT_L2_TIMEOUT - 1)
    await settle()
    expect(answer.state).toBe('pending')
    clock.advance(1)
    await settle()
    expect(answer).toMatchObject({ state: 'fulfilled', value: 'from origin' })
    expect(table.stats()).toMatchObject({ l2_timeouts: 1, loads: 1, inflight: 0 })
    l2.heal() // the stalled call settles late; its answer is ignored
    await settle()
    expect(await table.fetch('k', () => 'never')).toBe('from origin')
    await table.close()
  })

  it('an answer that arrived while the event loop was busy past the timeout is taken, not counted a timeout', async () => {
    const clock = manualClock(0)
    const store = memoryL2({ clock })
    await store.set('t', 'k', { kind: 'value', value: 'in L2', version: 1, ttl: 60_000 })
    let answerNow: (() => void) | undefined
    const busy: typeof store = {
      ...store,
      // The read is answered by the test, inside the same synchronous block that fires the timer.
      get: (table, id) => new Promise((resolve) => (answerNow = () => void store.get(table, id).then(resolve))),
    }
    const table = createTable<string>({ name: 't', ttl: 60_000, clock, l2: busy, sweepInterval: 1e9 })
    let loads = 0
    const answer = outcome(table.fetch('k', () => (loads++, 'from origin')))
    await settle()
    // One busy stretch of the event loop: the timer comes due and the reply lands before anything else runs.
    clock.advance(DEFAULT_L2_TIMEOUT + 20)
    answerNow!()
    await settle()
    await settle()
    expect(answer).toMatchObject({ state: 'fulfilled', value: 'in L2' })
    expect(table.stats()).toMatchObject({ l2_hits: 1, l2_timeouts: 0, loads: 0 })
    expect(loads).toBe(0)
    await table.close()
  })

  it('a garbage entry is a counted miss, not an outage', async () => {
    const { l2, table } = setup()
    l2.fail('get', { kind: 'corrupt' })
    expect(await table.fetch('k', () => 'clean')).toBe('clean')
    expect(table.stats()).toMatchObject({ l2_corrupt: 1, l2_errors: 0, loads: 1 })
    l2.heal()
    await table.close()
  })

  it('the breaker opens after repeated failures, skips L2 for the cool-down, and closes once L2 answers again', async () => {
    const { clock, l2, table } = setup()
    l2.fail('all', { kind: 'throw' })
    for (let i = 0; i < BREAKER_FAILURES; i++) await table.fetch(`down-${i}`, () => 'x') // each: one get failure (+ one set failure)
    const failuresSeen = l2.calls.get + l2.calls.set
    expect(table.stats().l2_errors).toBe(failuresSeen)
    const getsBefore = l2.calls.get
    await table.fetch('skipped', () => 'x')
    expect(l2.calls.get).toBe(getsBefore) // open: L2 is not asked
    expect(table.stats().l2_skipped).toBeGreaterThanOrEqual(1)

    l2.heal()
    clock.advance(BREAKER_COOLDOWN - 1)
    await table.fetch('still-open', () => 'x')
    expect(l2.calls.get).toBe(getsBefore)
    clock.advance(1)
    await table.put('shared', 'from elsewhere') // L2 answers again: the probe succeeds and closes the breaker
    expect(await table.fetch('after', () => 'loaded')).toBe('loaded')
    expect(l2.calls.get).toBe(getsBefore + 1)
    const stats = table.stats()
    expect(stats.l2_errors).toBe(failuresSeen)
    await table.close()
  })

  it('a probe that fails re-opens the breaker for another cool-down', async () => {
    const { clock, l2, table } = setup()
    l2.fail('all', { kind: 'throw' })
    for (let i = 0; i < BREAKER_FAILURES; i++) await table.fetch(`down-${i}`, () => 'x')
    clock.advance(BREAKER_COOLDOWN)
    const gets = l2.calls.get
    await table.fetch('probe', () => 'x') // one probe get, still failing
    expect(l2.calls.get).toBe(gets + 1)
    await table.fetch('again', () => 'x')
    expect(l2.calls.get).toBe(gets + 1) // open again
    l2.heal()
    await table.close()
  })

  it('with L2 stalled for every call, a herd is answered after one L2 timeout plus the loader; no waiter hangs', async () => {
    const { clock, l2, table } = setup()
    l2.fail('all', { kind: 'stall' })
    const herd = Array.from({ length: 50 }, () => outcome(table.fetch('hot', () => 'v')))
    await settle()
    clock.advance(DEFAULT_L2_TIMEOUT) // the read gives up → loader → answered; the write-back is not waited for
    await settle()
    expect(herd.every((w) => w.state === 'fulfilled' && w.value === 'v')).toBe(true)
    expect(table.stats()).toMatchObject({ l2_timeouts: 1, loads: 1, coalesced: 49, inflight: 0, fills: 1 })
    clock.advance(DEFAULT_L2_TIMEOUT) // the write-back gives up too
    await settle()
    expect(table.stats().l2_timeouts).toBe(2)
    l2.heal()
    await settle()
    await table.close()
  })
})
