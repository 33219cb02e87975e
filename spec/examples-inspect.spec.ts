import { describe, expect, it } from 'vitest'
import { parseResult, runExample } from './support/run-example.js'

describe('examples/inspect.ts', () => {
  it('prints every batch the owner receives: a herd of 100 as one miss message, hits as none, and counters that match', async () => {
    const run = await runExample('inspect.ts')
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toContain('miss "party" ×100')
    const result = parseResult<{ batches: number; messages: number; hits: number; misses: number; coalesced: number; loads: number; load_errors: number }>(run.stdout)
    expect(result).toMatchObject({ hits: 100, misses: 101, coalesced: 99, loads: 2, load_errors: 1 })
    // Each printed batch line lists its messages; together they are every message counted.
    const lines = run.stdout.split('\n').filter((line) => /^batch +\d+: /.test(line))
    const printed = lines.slice(0, result.batches).reduce((n, line) => n + line.split(': ')[1]!.split(', ').length, 0)
    expect(printed).toBe(result.messages)
  })
})
