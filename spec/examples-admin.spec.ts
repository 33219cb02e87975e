import { describe, expect, it } from 'vitest'
import { parseResult, runExample } from './support/run-example.js'

describe('examples/admin.ts', () => {
  it('peek and has show only live rows; an invalidate reaches the other instance; a clear empties both and L2', async () => {
    const run = await runExample('admin.ts')
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toContain('B.peek(2) = undefined (B never read it), B.has(1) = true')
    expect(run.stdout).toContain('after A.invalidate(1): A.has(1) = false, B.has(1) = false')
    const result = parseResult<{ sizeAfterClear: number[]; clears: number[]; afterClear: { originCalls: number; l2Hits: number }; cleared: unknown }>(run.stdout)
    expect(result).toEqual({ sizeAfterClear: [0, 0], clears: [1, 1], afterClear: { originCalls: 1, l2Hits: 0 }, cleared: { l2: 'cleared', broadcast: true } })
  })
})
