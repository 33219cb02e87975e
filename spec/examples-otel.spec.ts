import { describe, expect, it } from 'vitest'
import { parseResult, runExample } from './support/run-example.js'

describe('examples/otel.ts', () => {
  it('prints the spans of each request of a herd: one flight span (miss, 3 waiters) with its one load and L2 calls, two coalesced fetches linked to it, no span for a hit', async () => {
    const run = await runExample('otel.ts')
    expect(run.code, run.stderr).toBe(0)
    const result = parseResult<{
      fetchSpans: number
      loadSpans: number
      l2Spans: number
      waiters: number
      outcomes: Record<string, number>
      loads: number
      misses: number
      coalesced: number
      hits: number
    }>(run.stdout)
    expect(result).toMatchObject({ fetchSpans: 3, loadSpans: 1, l2Spans: 2, waiters: 3, outcomes: { miss: 1, coalesced: 2, hit: 1 } })
    // The spans agree with the table's own counters.
    expect(result.loadSpans).toBe(result.loads)
    expect(result.fetchSpans).toBe(result.misses)
    expect(result.outcomes.coalesced).toBe(result.coalesced)
    expect(result.outcomes.hit).toBe(result.hits)
    const flight = run.stdout.split('\n').find((line) => line.includes('outcome=miss'))!
    const id = /echostore\.fetch (\w+)/.exec(flight)![1]!
    expect(run.stdout.split('\n').filter((line) => line.includes(`link→${id}`))).toHaveLength(2)
    expect(run.stdout).toMatch(/echostore\.load \w+ {2}table=users id=ada/)
  })
})
