/**
 * The soak, short: the workload, fault schedule and bad-input catalog of `npm run soak`, for a few
 * seconds with a fixed seed, on the same three tables (no L2, chaos memory L2, chaos Redis L2) on
 * one bus. Under `CI=true` the Redis table always runs (a Redis that does not answer fails the
 * run); elsewhere, without Redis, the soak runs without that table and says so.
 *
 * The soak decides its own concurrency (workers, herds, cancel points); what this spec holds
 * fixed is the structure: every kind of operation, loader, cancel point, fault and catalog entry
 * comes round within the budget (a check of its own), and every check passes.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { DEFAULT_SEED } from '../soak/config.js'
import { renderReport } from '../soak/report.js'
import { type SoakResult, runSoak } from '../soak/run.js'
import { REDIS_URL, redisUp } from './support/redis.js'

const SECONDS = 4

const withRedis = redisUp || process.env.CI === 'true'
if (!withRedis)
  console.warn(`[skip] the soak's redis table needs Redis at ${REDIS_URL}: start one with: redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no (or set REDIS_URL)`)

describe(`the soak, ${SECONDS} s with seed ${DEFAULT_SEED}`, () => {
  let result: SoakResult
  const progress: string[] = []
  beforeAll(async () => {
    result = await runSoak({
      seconds: SECONDS,
      seed: DEFAULT_SEED,
      redis: withRedis ? { url: REDIS_URL } : { skipped: `no Redis at ${REDIS_URL}` },
      progressEvery: 1_000,
      progress: (line) => progress.push(line),
    })
  }, 30_000)

  it(`runs on ${withRedis ? 'all three tables' : 'the two tables without Redis'}, printing progress and a report with a verdict`, () => {
    expect(result.tables.map((t) => t.label)).toEqual(withRedis ? ['plain', 'memory', 'redis'] : ['plain', 'memory'])
    expect(progress.length).toBeGreaterThanOrEqual(SECONDS - 1)
    expect(progress[0]).toMatch(/^\[soak +\d+\.\ds\] [\d,]+ ops/)
    expect(renderReport(result).split('\n').at(-1)).toMatch(/^(PASS|FAIL): /)
  })

  it('covers every operation, loader, cancel point, fault and bad input within the budget', () => {
    expect(result.checks.find((c) => c.name.startsWith('every kind of work happened'))).toMatchObject({ status: 'PASS' })
  })

  it('keeps every counter law on every table, loses nothing, leaks nothing: every check passes', () => {
    expect(result.checks.filter((c) => c.status === 'FAIL')).toEqual([])
    // Only the heap check (vitest runs without --expose-gc) and, without Redis, the Redis keys may skip.
    const skippable = (name: string) => name.startsWith('heap') || (!withRedis && name === 'the run’s Redis keys are gone')
    expect(result.checks.filter((c) => c.status === 'SKIP' && !skippable(c.name))).toEqual([])
  })
})
