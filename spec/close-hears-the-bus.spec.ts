/**
 * A closed table hears its bus until its owner has stopped: its flights still answering after
 * `close()` (for up to their bound) store rows and write back to L2 as before, so a change another
 * instance makes meanwhile fences them as it would have before the close, and a lease waiter still
 * hears its holder's failure.
 */ import { expect, it } from 'vitest'
import { LeaseHolderFailedError, createTable, localBus, memoryL2 } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { latchedLoader, outcome, settle } from './support/latch.js'

const quiet = async () => {
  for (let i = 0; i < 10; i++) await settle()
}

it('a clear made while another instance drains is not undone by that instance’s write-back', async () => {
  const clock = manualClock(Date.UTC(2026, 0, 1))
  const l2 = memoryL2({ clock })
  const bus = localBus()
  const a = createTable<string>({ name: 't', clock, l2, bus })
  const b = createTable<string>({ name: 't', clock, l2, bus })
  const load = latchedLoader<string>()
  const first = outcome(a.fetch('k', load.loader)) // A's flight read L2 (miss) and is loading
  await quiet()
  expect(load.calls).toHaveLength(1)
  const closing = outcome(a.close()) // A drains: its flight goes on
  await quiet()
  expect(await b.clear()).toEqual({ l2: 'cleared', broadcast: true })
  load.only().resolve('loaded before the clear')
  await quiet()
  expect(first.value).toBe('loaded before the clear')
  expect(closing.state).toBe('fulfilled')
  // A heard the clear: its flight was fenced and wrote nothing back, so B loads afresh.
  expect(await b.fetch('k', () => 'fresh')).toBe('fresh')
  await b.close()
})

it('a draining lease waiter fails with its holder instead of loading again', async () => {
  const clock = manualClock(Date.UTC(2026, 0, 1))
  const l2 = memoryL2({ clock })
  const bus = localBus()
  const a = createTable<string>({ name: 't', clock, l2, bus, lease: true })
  const b = createTable<string>({ name: 't', clock, l2, bus, lease: true })
  const load = latchedLoader<string>()
  const fromA = outcome(a.fetch('k', load.loader)) // A holds the lease
  await quiet()
  const fromB = outcome(b.fetch('k', load.loader)) // B waits on it
  await quiet()
  const closing = outcome(b.close())
  await quiet()
  load.only().reject(new Error('origin down')) // A announces `unfilled` with `failed: true`; B, closing, still hears it
  await quiet()
  for (let i = 0; i < 10 && fromB.state === 'pending' && load.calls.length === 1; i++) {
    clock.advance(25) // B's own looks
    await quiet()
  }
  for (const call of load.calls.slice(1)) call.resolve('second load')
  await quiet()
  expect(fromA.state).toBe('rejected')
  // One load per herd across processes, and its one outcome.
  expect(load.calls).toHaveLength(1)
  expect(fromB.error).toBeInstanceOf(LeaseHolderFailedError)
  expect(closing.state).toBe('fulfilled')
  await a.close()
})

it('a bus whose unsubscribe throws still lets close() settle, and the throw is an error event', async () => {
  const bus = {
    publish: async () => {},
    subscribe: () => () => {
      throw new Error('unsubscribe failed')
    },
    close: async () => {},
  }
  const table = createTable<string>({ clock: manualClock(0), bus, sweepInterval: 1e9 })
  const errors: unknown[] = []
  table.events.on('error', ({ error }) => errors.push(error))
  await expect(table.close()).resolves.toBeUndefined()
  expect(String(errors[0])).toMatch(/unsubscribe failed/)
})
