/**
 * An L2 call's timeout counts from the end of the turn that made it, not from the call: a client
 * that writes a turn's commands only when the turn ends (node-redis) has not sent a request made
 * early in a long busy turn before then. A turn is made long on the manual clock by moving the clock
 * inside it; the calls of one turn share one timer.
 */
import { describe, expect, it } from 'vitest'
import { createTable } from '../src/index.js'
import { BREAKER_FAILURES, DEFAULT_L2_TIMEOUT } from '../src/limits.js'
import type { L2Entry, L2Store } from '../src/store.js'
import { chaosL2, manualClock, memoryL2, type ManualClock } from '../src/testing.js'
import { outcome, settle } from './support/latch.js'

/** Misses in the burst: more than the failures that open the breaker. */
const BURST = 8
/** What each miss costs its turn, in ms of the table's clock: the burst's turn lasts 120 ms, and five of its calls were made more than the timeout before it ended. */
const STEP = 15

/**
 * `store`, but each `get` costs the turn `busy()` after it is asked, and its request leaves only when
 * the turn ends, its reply read an I/O poll later (as node-redis writes a turn's commands in a
 * `setImmediate`). `answer: false`: no reply ever comes.
 */
function writtenAtTurnEnd(store: L2Store, busy: () => void, answer = true): L2Store & { gets: number } {
  const wrapped = {
    ...store,
    gets: 0,
    get: (table: string, id: string | number) => {
      wrapped.gets++
      const reply = new Promise<L2Entry | undefined>((resolve, reject) => {
        if (answer) setImmediate(() => setImmediate(() => store.get(table, id).then(resolve, reject)))
      })
      busy()
      return reply
    },
  }
  return wrapped
}

/** A memory L2 on `clock` holding `in L2 <id>` under each of `ids`. */
async function filledL2(clock: ManualClock, ids: readonly string[]): Promise<L2Store> {
  const store = memoryL2({ clock })
  for (const id of ids) await store.set('t', id, { kind: 'value', value: `in L2 ${id}`, version: 1, ttl: 60_000 })
  return store
}

const ids = Array.from({ length: BURST }, (_, i) => `k${i}`)

describe("an L2 call's timeout counts from the end of the turn that made it", () => {
  it('a burst of misses in one long busy turn is answered by L2: hits, no timeout, the breaker stays closed', async () => {
    const clock = manualClock(0)
    const l2 = writtenAtTurnEnd(await filledL2(clock, [...ids, 'after']), () => clock.advance(STEP))
    const table = createTable<string>({ name: 't', ttl: 60_000, clock, l2, sweepInterval: 1e9 })
    let loads = 0
    const answers = await Promise.all(ids.map((id) => table.fetch(id, () => (loads++, 'from origin'))))
    expect(answers).toEqual(ids.map((id) => `in L2 ${id}`))
    expect(table.stats()).toMatchObject({ l2_hits: BURST, l2_timeouts: 0, l2_errors: 0, loads: 0 })
    expect(loads).toBe(0)
    // The breaker is closed: the next miss asks L2 and is answered from it.
    expect(await table.fetch('after', () => 'from origin')).toBe('in L2 after')
    expect(l2.gets).toBe(BURST + 1)
    expect(table.stats()).toMatchObject({ l2_hits: BURST + 1, l2_skipped: 0 })
    await table.close()
  })

  it('a call that is never answered times out its timeout after the end of its turn, however long the turn', async () => {
    const clock = manualClock(0)
    const l2 = writtenAtTurnEnd(memoryL2({ clock }), () => clock.advance(2 * DEFAULT_L2_TIMEOUT), false)
    const table = createTable<string>({ name: 't', ttl: 60_000, clock, l2, sweepInterval: 1e9 })
    const answer = outcome(table.fetch('k', () => 'from origin'))
    await settle() // the turn ends, 100 ms after the call
    expect(answer.state).toBe('pending')
    clock.advance(DEFAULT_L2_TIMEOUT - 1)
    await settle()
    expect(answer.state).toBe('pending')
    expect(table.stats().l2_timeouts).toBe(0)
    clock.advance(1)
    await settle()
    expect(answer).toMatchObject({ state: 'fulfilled', value: 'from origin' })
    expect(table.stats()).toMatchObject({ l2_timeouts: 1, loads: 1 })
    await table.close()
  })

  it('the calls of one turn share one timer on the table’s clock, and time out together', async () => {
    /** A table whose L2 never answers, and the timers a turn of `count` misses added to its clock. */
    async function turnOf(count: number) {
      const clock = manualClock(0)
      const l2 = writtenAtTurnEnd(memoryL2({ clock }), () => {}, false)
      const table = createTable<string>({ name: 't', ttl: 60_000, clock, l2, sweepInterval: 1e9 })
      const before = clock.pending()
      const answers = ids.slice(0, count).map((id) => outcome(table.fetch(id, () => 'from origin')))
      await settle()
      expect(l2.gets).toBe(count)
      return { clock, table, answers, timers: clock.pending() - before }
    }
    const one = await turnOf(1)
    const burst = await turnOf(BURST)
    expect(burst.timers).toBe(one.timers) // the flights' bound is one timer, the turn's L2 calls one more
    for (const turn of [one, burst]) turn.clock.advance(DEFAULT_L2_TIMEOUT)
    await settle()
    expect(burst.answers.every((answer) => answer.state === 'fulfilled' && answer.value === 'from origin')).toBe(true)
    expect(burst.table.stats()).toMatchObject({ l2_timeouts: BURST, loads: BURST })
    await Promise.all([one.table.close(), burst.table.close()])
  })

  it('a closed table leaves no timer of its calls in progress on its clock', async () => {
    const clock = manualClock(0)
    const l2 = chaosL2(memoryL2({ clock }), clock)
    l2.fail('all', { kind: 'stall' })
    const table = createTable<string>({ name: 't', ttl: 60_000, clock, l2, sweepInterval: 1e9 })
    const few = ids.slice(0, BREAKER_FAILURES - 2)
    const answers = few.map((id) => outcome(table.fetch(id, () => 'from origin')))
    await settle()
    clock.advance(DEFAULT_L2_TIMEOUT) // the reads time out, the loaders answer; their write-backs are not waited for
    await settle()
    expect(answers.every((answer) => answer.state === 'fulfilled')).toBe(true)
    expect(l2.calls.set).toBe(few.length)
    expect(clock.pending()).toBeGreaterThan(0)
    await table.close()
    expect(clock.pending()).toBe(0)
    l2.heal()
  })
})
