/**
 * The fail-safe and the soft timeout answer the newest graced value known, L1's or L2's, also when
 * both carry one version (loads that report none, or a reload that carries the entry's version).
 */
import { describe, expect, it } from 'vitest'
import { createTable, memoryL2 } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { advanceSettled, latchedLoader, outcome, settle } from './support/latch.js'

const TTL = 1_000
const GRACE = 60_000
const fail = async (): Promise<string> => {
  throw new Error('origin down')
}

function processes(extra: object = {}) {
  const clock = manualClock(0)
  const l2 = memoryL2({ clock })
  const options = { name: 'shared', ttl: TTL, jitter: 0, grace: GRACE, sweepInterval: 1e9, clock, l2, ...extra }
  return { clock, a: createTable<string>(options), b: createTable<string>(options) }
}

describe('the newest graced value, at one version', () => {
  it('the fail-safe answers the L2 entry another process loaded later, not its own older row', async () => {
    const { clock, a, b } = processes()
    expect(await a.fetch('k', () => 'old')).toBe('old')
    clock.set(TTL / 2)
    expect(await b.fetch('k', () => 'new', { forceRefresh: true })).toBe('new') // L2 now holds 'new'
    clock.set(TTL + 2_000) // both graced
    expect(await a.fetch('k', fail)).toBe('new')
    let tried = 0
    expect(await a.fetch('k', () => (tried++, 'never'))).toBe('new') // the back-off answers the row the fail-safe stored
    expect(tried).toBe(0)
    await Promise.all([a.close(), b.close()])
  })

  it('the soft timeout answers it too', async () => {
    const { clock, a, b } = processes({ softTimeout: 10 })
    expect(await a.fetch('k', () => 'old')).toBe('old')
    clock.set(TTL / 2)
    await b.fetch('k', () => 'new', { forceRefresh: true })
    clock.set(TTL + 2_000)
    const origin = latchedLoader<string>()
    const read = outcome(a.fetch('k', origin.loader))
    await settle()
    await advanceSettled(clock, 20)
    expect(read.value).toBe('new')
    for (const call of origin.calls) call.resolve('newest')
    await settle()
    await Promise.all([a.close(), b.close()])
  })
})
