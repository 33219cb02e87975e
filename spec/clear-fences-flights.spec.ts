/**
 * `clear()` fences every flight in progress: a load that answers after `clear()` was called, and
 * before the owner handled it, is stored in neither layer, and a lease holder does not announce it
 * as a fill. After `clear()` resolves, neither this table nor another process sharing the L2 reads
 * the value loaded before it.
 */
import { describe, expect, it } from 'vitest'
import { type Table, createTable, localBus, memoryL2 } from '../src/index.js'
import type { CoherenceMessage } from '../src/store.js'
import { manualClock } from '../src/testing.js'
import { latchedLoader, outcome, settle } from './support/latch.js'

type Row = { v: string }

function twoProcesses(lease: boolean) {
  const clock = manualClock(0)
  const store = memoryL2({ clock })
  const bus = localBus()
  const heard: CoherenceMessage[] = []
  bus.subscribe((delivery) => delivery.type === 'message' && heard.push(delivery.message))
  const make = (): Table<Row> => createTable<Row>({ name: 'cleared', ttl: 60_000, jitter: 0, sweepInterval: 1e9, clock, l2: store, bus, lease })
  return { clock, store, heard, here: make(), there: make() }
}

describe('clear() with a load in flight', () => {
  for (const lease of [false, true]) {
    it(`stores the answer in neither layer when the loader answers between clear() and the owner's clear${lease ? ' (a lease holder announces no fill)' : ''}`, async () => {
      const { store, heard, here, there } = twoProcesses(lease)
      const origin = latchedLoader<Row>()
      const first = outcome(here.fetch('a', origin.loader))
      for (let i = 0; i < 10 && origin.calls.length === 0; i++) await settle()
      const call = origin.only()
      const cleared = here.clear() // L2 moves to its next generation at once
      call.resolve({ v: 'before the clear' })
      await cleared
      await settle()
      expect(first.state).toBe('fulfilled') // its waiter still gets the answer it asked for
      expect(await store.get('cleared', 'a')).toBeUndefined()
      expect(heard.filter((m) => m.kind === 'fill')).toEqual([])
      const after = latchedLoader<Row>()
      const mine = outcome(here.fetch('a', after.loader))
      const theirs = outcome(there.fetch('a', after.loader))
      for (let i = 0; i < 10 && after.calls.length < 2; i++) await settle()
      for (const c of after.calls) c.resolve({ v: 'after the clear' })
      await settle()
      expect(mine.value).toEqual({ v: 'after the clear' })
      expect(theirs.value).toEqual({ v: 'after the clear' })
      await Promise.all([here.close(), there.close()])
    })
  }
})
