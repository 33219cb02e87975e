import { describe, expect, it } from 'vitest'
import { parseResult, runExample } from './support/run-example.js'

describe('examples/batch.ts', () => {
  it('pages rendered together cost one origin call; overlapping pages ask only for what is not cached; a broken row fails alone; reads awaits apart share one call', async () => {
    const run = await runExample('batch.ts')
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toContain('pages 0-2: 47 distinct products shown (id 13 is absent), 1 origin call for 48 ids')
    expect(run.stdout).toContain('ids 12, 13, 66: product 12; absent; failed (product 66: row fails validation)')
    expect(run.stdout).toContain('ids 100-102, read 0, 2 and 4 awaits deep: 1 origin call for 3 ids')
    const result = parseResult<{ originCalls: number; idsAsked: number; firstBatch: number; batchLoads: number; outcomes: string[]; resolverCalls: number }>(run.stdout)
    expect(result).toEqual({ originCalls: 4, idsAsked: 76, firstBatch: 48, batchLoads: 4, outcomes: ['fulfilled', 'fulfilled', 'rejected'], resolverCalls: 1 })
  })
})
