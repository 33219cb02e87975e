import { describe, expect, it } from 'vitest'
import { parseResult, runExample } from './support/run-example.js'

interface CapacityResult {
  capacity: { sizeAfterCrawl: number; crawlAnswered: number; fullSkips: number; popularStillHits: number; readsToAdmit: number; evictions: number }
  maxSize: { weight: number; heaviest: number; rows: number; heavySkips: number; heavyOriginCalls: number; heavyAnswered: number }
}

describe('examples/capacity.ts', () => {
  it('capacity keeps the popular rows through a scan, admits a row asked for often; maxSize bounds the weight and skips a value heavier than it', async () => {
    const run = await runExample('capacity.ts')
    expect(run.code, run.stderr).toBe(0)
    const { capacity, maxSize } = parseResult<CapacityResult>(run.stdout)
    expect(capacity.sizeAfterCrawl).toBe(100)
    expect(capacity.crawlAnswered).toBe(500) // a bound never fails a fetch
    expect(capacity.fullSkips).toBeGreaterThan(400) // nearly every one-off page refused
    expect(capacity.fullSkips + Math.min(capacity.evictions, 500)).toBeGreaterThanOrEqual(500)
    expect(capacity.popularStillHits).toBeGreaterThan(50) // an LRU would have 0
    expect(capacity.readsToAdmit).toBeLessThan(20)
    expect(maxSize.heaviest).toBeLessThanOrEqual(65_536)
    expect(maxSize.weight).toBeLessThanOrEqual(65_536)
    expect(maxSize.rows).toBeGreaterThan(0)
    expect(maxSize).toMatchObject({ heavySkips: 2, heavyOriginCalls: 2, heavyAnswered: 102_400 })
  })
})
