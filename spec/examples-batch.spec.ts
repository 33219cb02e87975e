import { describe, expect, it } from 'vitest'
import { parseResult, runExample } from './support/run-example.js'

describe('examples/batch.ts', () => {
  it('pages rendered together cost one origin call; overlapping pages ask only for what is not cached; a broken row fails alone', async () => {
    const run = await runExample('batch.ts')
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toContain('pages 0-2: 72 products shown, 1 origin call for 48 ids')
    expect(run.stdout).toContain('ids 12, 13, 66: product 12; absent; failed (product 66: row fails validation)')
    const result = parseResult<{ originCalls: number; idsAsked: number; firstBatch: number; batchLoads: number; outcomes: string[] }>(run.stdout)
    expect(result).toEqual({ originCalls: 3, idsAsked: 73, firstBatch: 48, batchLoads: 3, outcomes: ['fulfilled', 'fulfilled', 'rejected'] })
  })
})
