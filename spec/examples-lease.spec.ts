/**
 * Runs `examples/lease.ts` (which starts four copies of itself) and checks the numbers it prints:
 * without the lease, four origin calls for the four processes' herds; with it, one, every process
 * answered the one value, the three others through the holder's fill; its keys cleaned up.
 */
import { describe, expect, it } from 'vitest'
import type { Stats } from '../src/index.js'
import { describeRedis, keysUnder, REDIS_URL, suiteRedis } from './support/redis.js'
import { parseResult, runExample } from './support/run-example.js'

type Round = { originCalls: number; perProcess: Stats[]; answers: string[] }
type Result = { prefix: string; processes: number; herd: number; withoutLease: Round; withLease: Round }

describeRedis('examples/lease.ts', () => {
  const raw = suiteRedis()

  it('four processes, one herd each: four origin calls without the lease, one with it, as printed', async () => {
    const { code, stdout, stderr } = await runExample('lease.ts', { REDIS_URL }, [], 60_000)
    expect(code, `stderr:\n${stderr}\nstdout:\n${stdout}`).toBe(0)
    const { prefix, withoutLease, withLease, herd } = parseResult<Result>(stdout)
    expect(withLease.originCalls).toBe(1)
    expect(withLease.answers).toHaveLength(1)
    const sum = (round: Round, key: keyof Stats) => round.perProcess.reduce((n, s) => n + s[key], 0)
    expect(sum(withLease, 'lease_acquired')).toBe(1)
    expect(sum(withLease, 'l2_hits')).toBe(3)
    expect(sum(withLease, 'loads')).toBe(1)
    expect(sum(withLease, 'misses')).toBe(4 * herd)
    expect(withoutLease.originCalls).toBeGreaterThanOrEqual(1) // four when the herds meet; fewer if one's read came after another's fill
    expect(sum(withoutLease, 'lease_acquired')).toBe(0)
    expect(stdout).toContain('Shown: with lease, 4 processes × 200 readers cost 1 origin call')
    expect(await keysUnder(raw(), prefix)).toEqual([])
  }, 70_000)
})

describe('examples/lease.ts without Redis', () => {
  it('says how to start Redis and exits 1', async () => {
    const { code, stderr, stdout } = await runExample('lease.ts', { REDIS_URL: 'redis://127.0.0.1:1' })
    expect(code).toBe(1)
    expect(stderr).toMatch(/needs Redis at redis:\/\/127\.0\.0\.1:1/)
    expect(stdout).not.toContain('RESULT')
  })
})
