/**
 * Runs `examples/redis-l2.ts` as a child process (which spawns its own child) and checks the numbers
 * it prints against what it claims: process A paid the one load of its herd, process B's cold herd
 * was answered by Redis (l2_hits 1, loads 0), and its keys were cleaned up.
 */
import { describe, expect, it } from 'vitest'
import type { Stats } from '../src/index.js'
import { describeRedis, keysUnder, REDIS_URL, suiteRedis } from './support/redis.js'
import { parseResult, runExample } from './support/run-example.js'

type Result = { prefix: string; id: string; a: Stats; b: Stats }

describeRedis('examples/redis-l2.ts', () => {
  const raw = suiteRedis()

  it('process B’s cold herd is an L2 hit with no load, as printed; its keys are gone afterwards', async () => {
    const { code, stdout, stderr } = await runExample('redis-l2.ts', { REDIS_URL })
    expect(code, `stderr:\n${stderr}\nstdout:\n${stdout}`).toBe(0)
    const { prefix, a, b } = parseResult<Result>(stdout)

    expect(a).toMatchObject({ misses: 200, loads: 1, coalesced: 199, l2_hits: 0, fills: 1, l2_errors: 0, l2_timeouts: 0, inflight: 0 })
    expect(b).toMatchObject({ misses: 200, loads: 0, l2_hits: 1, coalesced: 199, fills: 1, l2_errors: 0, l2_timeouts: 0, inflight: 0 })

    // The human-readable lines say the same as the numbers.
    expect(stdout).toMatch(/\[child \d+\]\s+l2_hits: 1, loads: 0,/)
    expect(stdout).toMatch(/origin calls: 1;/)
    expect(stdout).toMatch(/\[child \d+\] origin calls: 0;/)
    expect(stdout).toContain('Shown: process B')

    expect(prefix).toMatch(/^echostore-example:redis-l2:[0-9a-f]{12}:$/)
    expect(await keysUnder(raw(), prefix)).toEqual([])
  })
})

describe('examples/redis-l2.ts without Redis', () => {
  it('says how to start Redis and exits 1', async () => {
    const { code, stdout, stderr } = await runExample('redis-l2.ts', { REDIS_URL: 'redis://127.0.0.1:1' })
    expect(code).toBe(1)
    expect(stderr).toMatch(/needs Redis at redis:\/\/127\.0\.0\.1:1/)
    expect(stderr).toContain('redis-server')
    expect(stdout).not.toContain('RESULT')
  })
})
