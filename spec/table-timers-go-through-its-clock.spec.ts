/**
 * The `clock` option: "every timer the table uses goes through it". A table given a manual clock,
 * driven through every path that sets a timer (the sweeper, a flight's loadTimeout, a caller's
 * timeout, a soft timeout, the fail-safe's back-off, a lease's wait, a broadcast's bound, an L2
 * call's bound), never sets a Node timer of its own: each one is on the clock it was given, and
 * moves only when that clock does.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { type Id, createTable, localBus, memoryL2 } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { advanceSettled, latchedLoader, outcome, settle } from './support/latch.js'

/** Node timers set from EchoStore's own source (not from the test runner or a dependency). */
function nodeTimersFromSource() {
  const made: string[] = []
  const fromSource = () => {
    const stack = new Error().stack ?? ''
    return stack.split('\n').some((line) => line.includes('/src/') && !line.includes('node_modules'))
  }
  for (const name of ['setTimeout', 'setInterval'] as const) {
    const real = globalThis[name]
    vi.spyOn(globalThis, name).mockImplementation(((fn: () => void, ms?: number, ...rest: unknown[]) => {
      if (fromSource()) made.push(`${name}(${ms})`)
      return (real as (...a: unknown[]) => unknown)(fn, ms, ...rest)
    }) as never)
  }
  return made
}

afterEach(() => {
  vi.restoreAllMocks()
})

describe('a table on a manual clock', () => {
  it('sets every timer it uses on that clock, and none on Node’s', async () => {
    // The process's first createTable also makes the sample table that keeps the shapes of tables
    // (see keepSampleTable in src/table/table.ts), on the system clock, closed before createTable
    // returns; it is no table of the caller's, so it is made before the timers are watched.
    await createTable<string>({ clock: manualClock() }).close()
    const made = nodeTimersFromSource()
    const clock = manualClock(0)
    const l2 = memoryL2({ clock })
    const bus = localBus()
    const options = { clock, l2, bus, ttl: 1_000, jitter: 0, grace: 10_000, graceBackoff: 500, softTimeout: 50, loadTimeout: 300, sweepInterval: 100, lease: true } as const
    const table = createTable<string, Id>(options)
    const peer = createTable<string, Id>(options)

    // A fill, a caller's own deadline, the flight's bound and a soft timeout on a graced row.
    expect(await table.fetch('a', () => 'A')).toBe('A')
    const slow = latchedLoader<string>()
    const impatient = outcome(table.fetch('b', slow.loader, { timeout: 20 }))
    await settle()
    await advanceSettled(clock, 400)
    expect(impatient.state).toBe('rejected')
    await advanceSettled(clock, 1_000) // 'a' is graced now
    const soft = outcome(table.fetch('a', () => new Promise<string>(() => {})))
    await settle()
    await advanceSettled(clock, 60)
    expect(soft.value).toBe('A') // the soft timeout answered from the graced value
    await advanceSettled(clock, 400) // the flight's loadTimeout: the fail-safe absorbs it and backs off
    expect(await table.fetch('a', () => 'never')).toBe('A')

    // A lease another process holds, waited on; a put and an invalidate, broadcast.
    const held = latchedLoader<string>()
    const holder = outcome(peer.fetch('c', held.loader))
    await settle()
    const waiter = outcome(table.fetch('c', () => 'not mine'))
    await settle()
    held.only().resolve('C')
    await advanceSettled(clock, 100)
    expect([holder.value, waiter.value]).toEqual(['C', 'C'])
    await table.put('d', 'D')
    await table.invalidate('d')
    await advanceSettled(clock, 2_000) // sweeper passes

    // Each path above did set its timer (so each went through the clock).
    expect(table.stats()).toMatchObject({ timeouts: 1, failsafe: 1, lease_waited: 1 })
    expect(table.stats().stale_hits).toBeGreaterThanOrEqual(2)
    expect(table.stats().sweeps).toBeGreaterThan(0)
    await Promise.all([table.close(), peer.close()])
    expect(clock.now()).toBeGreaterThan(0)
    expect(made).toEqual([])
  })

  it('(the check sees a Node timer set from src/)', async () => {
    const made = nodeTimersFromSource()
    const table = createTable<string, Id>({ ttl: 1_000 }) // the system clock: Node timers
    await table.fetch('a', () => 'A', { timeout: 1_000 })
    await table.close()
    expect(made.length).toBeGreaterThan(0)
  })
})
