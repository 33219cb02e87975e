/**
 * `close()` called from code the owner runs while it processes a batch (a `sizeOf`, or a loader's
 * signal listener fired as its flight is abandoned or hits `loadTimeout`): the messages handed over
 * with it (the `close` itself, and a fetch made there while the table was still open) wait behind
 * the batch being processed. The owner stops only once none waits, so each is handled (the sweeper
 * stops, the fetch is answered) rather than dropped by the actor's stop: nothing is left pending,
 * and no timer of the table runs once `close()` has resolved.
 */
import { describe, expect, it } from 'vitest'
import { type Table, createTable } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { advanceSettled, latchedLoader, outcome, settle } from './support/latch.js'

type Via = 'sizeOf' | 'loader abort listener (caller left)' | 'loader abort listener (loadTimeout)'
const VIAS: Via[] = ['sizeOf', 'loader abort listener (caller left)', 'loader abort listener (loadTimeout)']

/**
 * A table whose owner calls `inside` while processing a batch, reached `via` one of the three ways,
 * with one fetch of "x" that gets it there. Returns the table, its clock, and the fetch's outcome.
 */
async function closeInside(via: Via, inside: (table: Table<string>) => void) {
  const clock = manualClock(0)
  let table!: Table<string>
  let called = false
  const once = () => {
    if (called) return
    called = true
    inside(table)
  }
  table = createTable<string>({
    name: 'inside',
    clock,
    sweepInterval: 1_000,
    loadTimeout: 500,
    ...(via === 'sizeOf' ? { maxSize: 100, sizeOf: (value: string) => (value === 'X' && once(), 1) } : {}),
  })
  const origin = latchedLoader<string>()
  const caller = new AbortController()
  const first = outcome(
    via === 'sizeOf'
      ? table.fetch('x', () => 'X')
      : table.fetch(
          'x',
          (id, context) => {
            context.signal.addEventListener('abort', once)
            return origin.loader(id, context)
          },
          via === 'loader abort listener (caller left)' ? { signal: caller.signal } : undefined,
        ),
  )
  await settle()
  if (via === 'loader abort listener (caller left)') caller.abort(new Error('caller left'))
  if (via === 'loader abort listener (loadTimeout)') await advanceSettled(clock, 600)
  await settle()
  expect(called).toBe(true)
  return { table, clock, first }
}

describe('close() called inside the owner’s processing', () => {
  for (const via of VIAS) {
    it(`from a ${via}: close() resolves and the sweeper is stopped (no timer left, no sweep afterwards)`, async () => {
      let inner: Promise<void> | undefined
      const { table, clock, first } = await closeInside(via, (t) => {
        inner = t.close()
      })
      expect(first.state).not.toBe('pending')
      const closed = outcome(table.close())
      expect(table.close()).toBe(inner)
      await settle()
      expect(closed.state).toBe('fulfilled')
      expect(clock.pending()).toBe(0)
      const sweeps = table.stats().sweeps
      await advanceSettled(clock, 10_000)
      expect(table.stats().sweeps).toBe(sweeps)
      expect(clock.pending()).toBe(0)
    })

    it(`from a ${via}: a fetch made there, before close(), is answered and counted (misses = flights + coalesced)`, async () => {
      let made: ReturnType<typeof outcome<string>> | undefined
      const { table, clock } = await closeInside(via, (t) => {
        made = outcome(t.fetch('fallback', () => 'F'))
        void t.close()
      })
      await advanceSettled(clock, 1_000)
      expect(made?.state).toBe('fulfilled')
      expect(made?.value).toBe('F')
      const closed = outcome(table.close())
      await settle()
      expect(closed.state).toBe('fulfilled')
      const stats = table.stats()
      expect(stats.misses).toBe(stats.flights + stats.coalesced)
      expect(stats.inflight).toBe(0)
      expect(clock.pending()).toBe(0)
    })
  }
})
