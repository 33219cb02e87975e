/**
 * The circuit breaker, as operations.md's failure table gives it: 5 *consecutive* L2 failures
 * open it (a success in between starts the count again; the fifth opens it, not the fourth), it
 * then skips L2 for 1 s of the table's clock; and corrupt entries, however many, never trip it.
 */
import { describe, expect, it } from 'vitest'
import { createTable, memoryL2 } from '../src/index.js'
import { chaosL2, manualClock } from '../src/testing.js'

function setup() {
  const clock = manualClock(0)
  const l2 = chaosL2(memoryL2({ clock }), clock)
  const table = createTable<string>({ name: 'b', ttl: 60_000, clock, l2, sweepInterval: 1e9 })
  return { clock, l2, table }
}

describe('the breaker', () => {
  it('opens at the fifth consecutive failure, not before; a success in between starts the count again', async () => {
    const { l2, table } = setup()
    l2.fail('all', { kind: 'throw' })
    await table.fetch('x1', () => 'v') // get and set fail: 2
    await table.fetch('x2', () => 'v') // 4
    l2.heal()
    await table.fetch('y', () => 'v') // get and set succeed: the count starts again
    l2.fail('all', { kind: 'throw' })
    await table.fetch('x3', () => 'v') // 2
    await table.fetch('x4', () => 'v') // 4 consecutive: still closed
    expect(table.stats()).toMatchObject({ l2_errors: 8, l2_skipped: 0 })
    const gets = l2.calls.get
    await table.fetch('x5', () => 'v') // its get is the fifth consecutive failure: open; its set is skipped
    expect(l2.calls.get).toBe(gets + 1)
    expect(table.stats()).toMatchObject({ l2_errors: 9, l2_skipped: 1 })
    await table.fetch('x6', () => 'v')
    expect(l2.calls.get).toBe(gets + 1)
    expect(table.stats().l2_skipped).toBe(3)
    l2.heal()
    await table.close()
  })

  it('skips L2 for 1 s of the table clock once open', async () => {
    const { clock, l2, table } = setup()
    l2.fail('all', { kind: 'throw' })
    for (let i = 0; i < 3; i++) await table.fetch(`down-${i}`, () => 'v') // 5 failures by the third get
    l2.heal()
    const gets = l2.calls.get
    clock.advance(999)
    await table.fetch('still skipped', () => 'v')
    expect(l2.calls.get).toBe(gets)
    clock.advance(1)
    await table.fetch('probe', () => 'v')
    expect(l2.calls.get).toBe(gets + 1)
    await table.close()
  })

  it('is never tripped by corrupt entries, however many', async () => {
    const { l2, table } = setup()
    l2.fail('get', { kind: 'corrupt' })
    for (let i = 0; i < 12; i++) expect(await table.fetch(`c-${i}`, () => 'clean')).toBe('clean')
    expect(l2.calls.get).toBe(12)
    expect(table.stats()).toMatchObject({ l2_corrupt: 12, l2_skipped: 0, l2_errors: 0 })
    l2.heal()
    await table.close()
  })
})

describe('a probe that succeeds', () => {
  it('closes the breaker: the next failure alone does not open it again', async () => {
    const { clock, l2, table } = setup()
    l2.fail('all', { kind: 'throw' })
    for (let i = 0; i < 3; i++) await table.fetch(`down-${i}`, () => 'v')
    l2.heal()
    clock.advance(1_000)
    await table.fetch('probe', () => 'v') // get and set succeed
    l2.fail('get', { kind: 'throw' }, { times: 1 })
    await table.fetch('one failure', () => 'v')
    const skipped = table.stats().l2_skipped
    const gets = l2.calls.get
    await table.fetch('after', () => 'v')
    expect(l2.calls.get).toBe(gets + 1) // asked: the breaker is closed
    expect(table.stats().l2_skipped).toBe(skipped)
    await table.close()
  })
})
