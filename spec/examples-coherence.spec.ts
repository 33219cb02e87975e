/**
 * Runs `examples/coherence.ts` (which spawns two children of itself) and checks the numbers it
 * prints against what it claims: after A's put, B and C each applied the change once and served the
 * new value from L2 without a load; the injected older message was dropped as stale by all three;
 * every process exited cleanly, and the run's keys were deleted.
 */
import { describe, expect, it } from 'vitest'
import type { Stats } from '../src/index.js'
import { describeRedis, keysUnder, REDIS_URL, suiteRedis } from './support/redis.js'
import { parseResult, runExample } from './support/run-example.js'

type Result = { prefix: string; id: string; served: { B: string | null; C: string | null }; stats: { A: Stats; B: Stats; C: Stats } }

describeRedis('examples/coherence.ts', () => {
  const raw = suiteRedis()

  it('B and C apply A’s put and serve it at once from L2; the late older message is stale everywhere; keys are gone', async () => {
    const { code, stdout, stderr } = await runExample('coherence.ts', { REDIS_URL })
    expect(code, `stderr:\n${stderr}\nstdout:\n${stdout}`).toBe(0)
    const { prefix, id, served, stats } = parseResult<Result>(stdout)

    expect(id).toBe('party')
    expect(served).toEqual({ B: '🥳 v2', C: '🥳 v2' })
    // A wrote; it hears only the injected message (its own put is not echoed back to it).
    expect(stats.A).toMatchObject({ coh_applied: 0, coh_stale: 1, loads: 1, coh_invalid: 0, bus_errors: 0, inflight: 0 })
    for (const s of [stats.B, stats.C]) {
      // One applied change (A's put of v2), one stale (the injected v1); both reads of v1 and v2 came from L2.
      expect(s).toMatchObject({ coh_applied: 1, coh_stale: 1, coh_invalid: 0, coh_gaps: 0, loads: 0, l2_hits: 2, fenced: 0, inflight: 0 })
      expect(s.coh_applied + s.coh_stale).toBe(2) // every message counted once
    }

    // The human-readable lines say the same as the numbers.
    expect(stdout).toMatch(/\[A pid \d+\] put v2 \(applied: true, broadcast: true\)/)
    expect(stdout).toMatch(/\[B pid \d+\] message put v2: newer → row dropped; next read serves "🥳 v2"/)
    expect(stdout).toMatch(/\[C pid \d+\] message put v1: not newer than what I hold → dropped \(coh_stale\)/)
    expect(stdout).toMatch(/\[B pid \d+\] coh_applied 1 {2}coh_stale 1/)
    expect(stdout).toContain('exited with codes 0, 0')
    expect(stdout).toContain('Shown: after A')

    expect(prefix).toMatch(/^echostore-example:coherence:[0-9a-f]{12}:$/)
    expect(await keysUnder(raw(), prefix)).toEqual([])
  }, 60_000)
})

describe('examples/coherence.ts without Redis', () => {
  it('says how to start Redis and exits 1', async () => {
    const { code, stdout, stderr } = await runExample('coherence.ts', { REDIS_URL: 'redis://127.0.0.1:1' })
    expect(code).toBe(1)
    expect(stderr).toMatch(/needs Redis at redis:\/\/127\.0\.0\.1:1/)
    expect(stderr).toContain('redis-server')
    expect(stdout).not.toContain('RESULT')
  })
})
