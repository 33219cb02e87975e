/**
 * The scheduled model test: fast-check generates a table configuration and a list of operations
 * (fetches with and without options, puts, invalidates, clears, aborts, clock moves), and its
 * scheduler decides the order in which loader answers, L2 calls and bus deliveries arrive, on the
 * manual clock. After every run: every answer is of the id asked for and no older than a change its
 * table knew of, a forced refresh is answered by a loader, the counter laws hold, every promise
 * settled, and no timer is left on the clock after close (see soak/model/run.ts).
 *
 * Runs that failed once are kept below by their seed and path, and replayed first.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { runScenario } from '../soak/model/run.js'
import { leaseTakeoverArb, scenarioArb } from '../soak/model/scenario.js'

/** Runs that once broke a promise, replayed as they were found. */
const KEPT: { seed: number; path: string; what: string }[] = [
  { seed: -1946602295, path: '132', what: 'a forced refresh joined an unforced flight that L2 answered with a put’s value' },
  { seed: 23, path: '7866:8', what: 'a put refused by L2 (which held a newer tombstone) left the older row it was meant to replace' },
  { seed: 7331, path: '5679:3:4:4:6:10:10:12:12', what: 'a forced refresh’s write-back, still on its way to L2, landed after a clear in the next generation' },
  { seed: 7331, path: '492:3:1:2:5:5:10:10:8:8:8:8:8', what: 'a forced refresh whose loader failed was answered by the fail-safe with the row it was to replace' },
  { seed: -557831535, path: '274:11:0:8:8:8:2:3:5:0:3', what: 'a lease waiter failed with its holder in another table (LeaseHolderFailedError, a rejection its caller may get)' },
]

const property = (scenarios = scenarioArb()) =>
  fc.asyncProperty(scenarios, fc.scheduler(), async (scenario, scheduler) => {
    const problems = await runScenario(scenario, scheduler)
    expect(problems).toEqual([])
  })

describe('the scheduled model', () => {
  for (const kept of KEPT) {
    it(`replays a kept run: ${kept.what}`, async () => {
      await fc.assert(property(), { seed: kept.seed, path: kept.path, endOnFailure: true })
    })
  }

  it('keeps every promise on a few hundred schedules of fetches, changes, clears, aborts and timeouts', async () => {
    await fc.assert(property(), { numRuns: 300 })
  }, 120_000)

  it('keeps every promise with three processes on one lease: holders that run out and are taken over, and waiters of the new holder', async () => {
    await fc.assert(property(leaseTakeoverArb()), { numRuns: 150 })
  }, 120_000)
})
