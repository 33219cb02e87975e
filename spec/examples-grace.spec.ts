import { describe, expect, it } from 'vitest'
import { parseResult, runExample } from './support/run-example.js'

interface GraceResult {
  failsafe: { outage: string; backoff: string; originCalls: number; afterChange: string; reasons: string[]; load_errors: number; failsafe: number; stale_hits: number }
  swr: { atOnce: string; refreshed: string; originCalls: number; reasons: string[]; stale_hits: number }
  soft: { early: string; answeredAfter: number; later: string; originCalls: number; reasons: string[]; stale_hits: number }
}

describe('examples/grace.ts', () => {
  it('the fail-safe, stale-while-revalidate and a soft timeout each answer the graced value, and a change beats grace', async () => {
    const run = await runExample('grace.ts')
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toContain('1. fail-safe: the row expired, then the origin failed')
    expect(run.stdout).toContain('after invalidate (a change beats grace), with the origin still down: error (origin: 503 Service Unavailable)')
    expect(parseResult<GraceResult>(run.stdout)).toEqual({
      failsafe: {
        outage: '100',
        backoff: '100',
        originCalls: 1,
        afterChange: 'error (origin: 503 Service Unavailable)',
        reasons: ['failsafe×10', 'backoff×10'],
        load_errors: 2,
        failsafe: 1,
        stale_hits: 20,
      },
      swr: { atOnce: '100', refreshed: '110', originCalls: 1, reasons: ['swr×10'], stale_hits: 10 },
      soft: { early: '100', answeredAfter: 100, later: '120', originCalls: 1, reasons: ['soft×10'], stale_hits: 10 },
    })
  })
})
