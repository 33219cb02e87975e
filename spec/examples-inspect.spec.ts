import { describe, expect, it } from 'vitest'
import { parseResult, runExample } from './support/run-example.js'

describe('examples/inspect.ts', () => {
  it('prints every batch the owner receives, its close included: a herd of 100 as one miss message, hits as none, and counters that match', async () => {
    const run = await runExample('inspect.ts')
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toContain('miss "party" ×100')
    const result = parseResult<{ batches: number; messages: number; hits: number; misses: number; coalesced: number; loads: number; load_errors: number }>(run.stdout)
    expect(result).toMatchObject({ hits: 100, misses: 101, coalesced: 99, loads: 2, load_errors: 1 })
    // Each printed batch line lists its messages; together they are every message counted.
    // Every batch, the close's included, is printed before the summary that counts them.
    const beforeResult = run.stdout.slice(0, run.stdout.indexOf('RESULT '))
    const lines = beforeResult.split('\n').filter((line) => /^batch +\d+: /.test(line))
    expect(lines).toHaveLength(result.batches)
    expect(lines.at(-1)).toMatch(/: close$/)
    const printed = lines.reduce((n, line) => n + line.split(': ')[1]!.split(', ').length, 0)
    expect(printed).toBe(result.messages)
  })
})
