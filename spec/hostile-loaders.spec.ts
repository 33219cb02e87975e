/**
 * Whatever a loader does, every flight ends: after a catalog of hostile loaders on one table, and
 * the table's bound (`loadTimeout`) passed, no flight is left (`inflight` 0), every caller settled,
 * and `close()` resolves with no timer left on the clock.
 */
import { describe, expect, it } from 'vitest'
import { type TableOptions, createTable, memoryL2 } from '../src/index.js'
import { type ManualClock, manualClock } from '../src/testing.js'
import { advanceSettled, outcome, settle } from './support/latch.js'
import { HOSTILE_LOADERS } from './support/hostile-loaders.js'
import { runAlone } from './support/run-alone.js'

const never = new Promise<never>(() => {})

const SHAPES: [string, (clock: ManualClock) => TableOptions][] = [
  ['without L2', () => ({})],
  ['with grace', () => ({ grace: 1_000 })],
  ['with a memory L2', (clock) => ({ l2: memoryL2({ clock }) })],
  ['with a memory L2 and leases', (clock) => ({ l2: memoryL2({ clock }), lease: true })],
]

describe('a catalog of hostile loaders on one table', () => {
  for (const [shape, options] of SHAPES)
    it(`(${shape}) ends every flight: inflight 0 past the bound, every caller settled, close() resolves, no timer left`, async () => {
      const clock = manualClock(0)
      const table = createTable<unknown>({ ttl: 1_000, jitter: 0, loadTimeout: 100, sweepInterval: 1e9, clock, ...options(clock) })
      const answers = HOSTILE_LOADERS.map(([name, make]) => outcome(table.fetch(name, make(table as never))))
      // A never-settling loader whose two waiters leave, one by abort and one by its deadline.
      const controller = new AbortController()
      const hung = () => never
      answers.push(outcome(table.fetch('left', hung, { signal: controller.signal })))
      answers.push(outcome(table.fetch('left', hung, { timeout: 10 })))
      await settle()
      controller.abort(new Error('left'))
      await advanceSettled(clock, 1_000)
      expect(answers.filter((a) => a.state === 'pending')).toHaveLength(0)
      expect(table.stats().inflight).toBe(0)
      const closed = outcome(table.close())
      await advanceSettled(clock, 500)
      expect(closed.state).toBe('fulfilled')
      expect(clock.pending()).toBe(0)
    })
})

describe('the catalog alone in a process, on the system clock', () => {
  it('settles every fetch, leaves no flight, and close() resolves before the process exits', async () => {
    const run = await runAlone('hostile-loader-catalog.ts')
    expect(run.stdout).toContain('inflight 0')
    expect(run.stdout).toContain('closed')
    expect(run.code).toBe(0)
  })
})
