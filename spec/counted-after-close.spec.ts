/**
 * A lease holder that `loadTimeout` released gives its lease back and says so then, while the bus is
 * open: with `closeStores: true`, its loader answering after the table closed its bus publishes
 * nothing late (it once did, and that failure was counted by the stopped owner). An L2 call that fails once the owner stopped is counted in `l2_errors`, with an `l2_error` event,
 * whether it was in progress as the owner stopped (its answer was given then) or made afterwards.
 */
import { describe, expect, it } from 'vitest'
import { BusClosedError, type TableEvents, createTable, localBus, memoryL2 } from '../src/index.js'
import type { L2Store } from '../src/store.js'
import { manualClock } from '../src/testing.js'
import { advanceSettled, latchedLoader, outcome, settle } from './support/latch.js'

describe('a count posted to a stopped owner', () => {
  for (const answer of ['resolves', 'rejects'] as const) {
    it(`a lease holder released by loadTimeout whose loader ${answer} after closeStores closed the bus has said all it had to: no late publish, no bus_errors`, async () => {
      const clock = manualClock(0)
      const bus = localBus()
      const table = createTable<string>({ name: 'late', clock, l2: memoryL2({ clock }), bus, lease: { ttl: 300, wait: 600 }, loadTimeout: 500, closeStores: true })
      const busErrors: unknown[] = []
      table.events.on('error', (event) => {
        if (event.error instanceof BusClosedError) busErrors.push(event.error)
      })
      const published: string[] = []
      const origin = latchedLoader<string>()
      const read = outcome(table.fetch('x', origin.loader))
      await advanceSettled(clock, 0)
      expect(origin.calls).toHaveLength(1)
      expect(table.stats().lease_acquired).toBe(1)
      const unsubscribe = bus.subscribe((delivery) => {
        if (delivery.type === 'message') published.push(delivery.message.kind)
      })
      const closed = outcome(table.close())
      await advanceSettled(clock, 3_000)
      expect(read.state).toBe('rejected') // loadTimeout released the flight; the owner stopped, the bus closed
      expect(closed.state).toBe('fulfilled')
      expect(published).toEqual(['unfilled']) // the lease given back at the release, while the bus was open
      unsubscribe()
      expect(table.stats().bus_errors).toBe(0)
      if (answer === 'resolves') origin.only().resolve('late')
      else origin.only().reject(new Error('late failure'))
      await advanceSettled(clock, 3_000)
      expect(busErrors).toHaveLength(0)
      expect(table.stats().bus_errors).toBe(0)
      expect(clock.pending()).toBe(0)
    })
  }
})

describe('an L2 call that fails once the owner stopped', () => {
  it('is counted in l2_errors with an l2_error event, in progress as the owner stopped or made afterwards (a lease given back)', async () => {
    const clock = manualClock(0)
    const store = memoryL2({ clock })
    const own = store.leases!
    let failing = false
    const failed: string[] = []
    /** `call`, failing while `failing` is on. */
    const failable =
      <A extends unknown[], R>(name: string, call: (...args: A) => Promise<R>) =>
      (...args: A): Promise<R> => {
        if (!failing) return call(...args)
        failed.push(`${name}(${String(args[1])})`)
        return Promise.reject(new Error('l2 down'))
      }
    const l2: L2Store = {
      get: failable('get', (t: string, i: string) => store.get(t, i)),
      set: failable('set', (t: string, i: string, e: Parameters<L2Store['set']>[2]) => store.set(t, i, e)),
      nextVersion: failable('nextVersion', (t: string, i: string, f: number) => store.nextVersion(t, i, f)),
      clear: failable('clear', (t: string) => store.clear(t)),
      close: async () => {},
      leases: {
        acquire: failable('leases.acquire', (t: string, i: string, token: string, ttl: number) => own.acquire(t, i, token, ttl)),
        acquireMany: failable('leases.acquireMany', (t: string, ids: readonly string[], token: string, ttl: number) => own.acquireMany!(t, ids, token, ttl)),
        setAndRelease: failable('leases.setAndRelease', (t: string, i: string, e: Parameters<L2Store['set']>[2], token: string) => own.setAndRelease!(t, i, e, token)),
        release: failable('leases.release', (t: string, i: string, token: string) => own.release(t, i, token)),
        void: failable('leases.void', (t: string, i: string) => own.void(t, i)),
      },
    }
    const table = createTable<string>({ name: 'stopping', clock, l2, lease: { ttl: 50, wait: 60 } })
    const events: TableEvents['l2_error'][] = []
    table.events.on('l2_error', (event) => events.push(event))
    let answer!: (values: string[]) => void
    const read = outcome(table.fetchMany(['a', 'b'], () => new Promise<string[]>((resolve) => (answer = resolve))))
    await settle()
    const closed = table.close() // the batch in progress still answers
    failing = true
    answer(['A', 'B'])
    await closed
    for (let i = 0; i < 5; i++) await settle()
    expect(read).toMatchObject({ state: 'fulfilled', value: ['A', 'B'] })
    expect(failed.length).toBeGreaterThanOrEqual(2)
    expect(table.stats().l2_errors).toBe(failed.length)
    expect(events.map((event) => `${event.op}(${String(event.id)})`).sort()).toEqual(failed.sort())
    expect(clock.pending()).toBe(0)
  })
})
