import { describe, expect, it } from 'vitest'
import { parseResult, runExample } from './support/run-example.js'

interface DeadlinesResult {
  deadlines: string[]
  first: { timeouts: number; cancelled: number; fills: number; originCalls: number }
  abandoned: { outcomes: string[]; abandoned: number; loaderAborted: boolean }
  loadTimeout: { outcomes: string[]; loadErrors: number; loaderAborted: boolean }
  forceRefresh: { plain: number; forced: number; after: number; originCalls: number }
}

describe('examples/deadlines.ts', () => {
  it("a caller's timeout and signal leave the flight to the others; callers all gone abandon it; loadTimeout bounds it; forceRefresh reloads a live row", async () => {
    const run = await runExample('deadlines.ts')
    expect(run.code, run.stderr).toBe(0)
    const result = parseResult<DeadlinesResult>(run.stdout)
    expect(result.deadlines).toEqual(['FetchTimeoutError at 50 ms', 'AbortError at 100 ms', 'value v1 at 300 ms'])
    expect(result.first).toEqual({ timeouts: 1, cancelled: 1, fills: 1, originCalls: 1 })
    expect(result.abandoned.outcomes).toEqual(['AbortError at 50 ms', 'AbortError at 50 ms'])
    expect(result.abandoned).toMatchObject({ abandoned: 1, loaderAborted: true })
    expect(result.loadTimeout.outcomes).toEqual(['LoadTimeoutError at 200 ms', 'LoadTimeoutError at 200 ms'])
    expect(result.loadTimeout).toMatchObject({ loadErrors: 1, loaderAborted: true })
    expect(result.forceRefresh).toEqual({ plain: 1, forced: 2, after: 2, originCalls: 1 })
  })
})
