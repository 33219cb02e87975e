/**
 * Grace, as properties over random reads, clock moves and origin outages: the counter laws hold
 * with stale answers in them; no answer is older than its expiry plus the grace; every answer is a
 * value some load of that id produced; and with a grace longer than the run, a read of an id that
 * was ever filled never fails, whatever the origin does.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { type Id, createTable } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { advanceSettled, settle } from './support/latch.js'

const TTL = 100
const LATENCY = 10
const LOAD_TIMEOUT = 60

/** What a load answered with: its id, and when it was answered (ms on the run's clock). */
interface Answer {
  id: number
  at: number
}

type Op = { kind: 'read'; id: number; soft: boolean } | { kind: 'advance'; ms: number } | { kind: 'origin'; up: boolean; hangs: boolean }

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('read' as const), id: fc.integer({ min: 0, max: 2 }), soft: fc.boolean() }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 1, max: 150 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('origin' as const), up: fc.boolean(), hangs: fc.boolean() }) },
)

const settings = fc.record({
  grace: fc.oneof({ weight: 1, arbitrary: fc.constant(0) }, { weight: 3, arbitrary: fc.integer({ min: 1, max: 300 }) }, { weight: 2, arbitrary: fc.constant(1_000_000) }),
  staleWhileRevalidate: fc.boolean(),
  graceBackoff: fc.integer({ min: 1, max: 200 }),
  softTimeout: fc.option(fc.integer({ min: 1, max: 30 }), { nil: undefined }),
})

describe('grace, as properties', () => {
  it('keeps the counter laws, bounds staleness by the grace, and with a long grace never fails a read of a filled id', async () => {
    await fc.assert(
      fc.asyncProperty(settings, fc.array(op, { minLength: 10, maxLength: 80 }), async (options, ops) => {
        const clock = manualClock(0)
        const { grace, graceBackoff, softTimeout } = options
        const staleWhileRevalidate = options.staleWhileRevalidate && grace > 0
        const table = createTable<Answer | undefined, Id>({
          ttl: TTL,
          jitter: 0,
          sweepInterval: 50,
          loadTimeout: LOAD_TIMEOUT,
          grace,
          staleWhileRevalidate,
          graceBackoff,
          ...(softTimeout !== undefined && { softTimeout }),
          clock,
        })
        table.events.on('error', () => {}) // failures are what this property is about
        let up = true
        let hangs = false
        /** The first time each id was filled by a load. */
        const filled = new Map<number, number>()
        const loader = (id: string | number) =>
          new Promise<Answer>((resolve, reject) => {
            if (hangs && !up) return // never answers: loadTimeout ends the flight
            const failing = !up
            clock.setTimeout(() => {
              if (failing) return reject(new Error('origin down'))
              const answer = { id: Number(id), at: clock.now() }
              if (!filled.has(answer.id)) filled.set(answer.id, answer.at)
              resolve(answer)
            }, LATENCY)
          })
        const reads: Promise<void>[] = []
        const problems: string[] = []
        let fetches = 0
        for (const step of ops) {
          if (step.kind === 'advance') await advanceSettled(clock, step.ms)
          else if (step.kind === 'origin') ({ up, hangs } = step)
          else {
            fetches++
            const issuedAt = clock.now()
            const everFilled = filled.has(step.id)
            const read = table.fetch(step.id, loader, step.soft ? { softTimeout: 5 } : undefined)
            reads.push(
              read.then(
                (answer) => {
                  if (answer === undefined || answer.id !== step.id) problems.push(`read of ${step.id} answered ${JSON.stringify(answer)}`)
                  else if (clock.now() > answer.at + TTL + grace) problems.push(`read of ${step.id} at ${clock.now()} answered a value filled at ${answer.at}: older than ttl + grace`)
                },
                (error) => {
                  if (grace === 1_000_000 && everFilled) problems.push(`read of ${step.id} at ${issuedAt}, filled at ${filled.get(step.id)}, failed: ${error}`)
                },
              ),
            )
          }
          await settle()
        }
        // Quiescence: every flight ends by its latency or its loadTimeout.
        for (let i = 0; i < 4 && table.stats().inflight > 0; i++) await advanceSettled(clock, LOAD_TIMEOUT)
        await Promise.all(reads)
        expect(problems).toEqual([])
        const stats = table.stats()
        expect(stats.hits + stats.misses).toBe(fetches)
        expect(stats.misses).toBe(stats.flights + stats.coalesced)
        expect(stats.failsafe).toBeLessThanOrEqual(stats.load_errors)
        expect(stats.stale_hits).toBeLessThanOrEqual(stats.misses)
        expect(stats.loads).toBeLessThanOrEqual(stats.flights)
        expect(stats.inflight).toBe(0)
        if (grace === 0) expect(stats).toMatchObject({ stale_hits: 0, failsafe: 0 })
        await table.close()
      }),
      { numRuns: Number(process.env.GRACE_RUNS ?? 200) },
    )
  })
})
