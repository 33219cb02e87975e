/**
 * Runs `examples/node-redis.ts` as a child process and checks what it prints: the node-redis
 * instance paid the one load of its herd, the ioredis instance read it from L2 and heard the put on
 * the bus, and the run's keys were cleaned up.
 */
import { expect, it } from 'vitest'
import type { Stats } from '../src/index.js'
import { describeRedis, keysUnder, REDIS_URL, suiteRedis } from './support/redis.js'
import { parseResult, runExample } from './support/run-example.js'

type Result = { prefix: string; a: Stats; b: Stats; bHeard: boolean; bAfter: number; originCalls: number }

describeRedis('examples/node-redis.ts', () => {
  const raw = suiteRedis()

  it('a node-redis instance and an ioredis instance share one L2 and one bus, as printed; its keys are gone afterwards', async () => {
    const { code, stdout, stderr } = await runExample('node-redis.ts', { REDIS_URL })
    expect(code, `stderr:\n${stderr}\nstdout:\n${stdout}`).toBe(0)
    const { prefix, a, b, bAfter, originCalls } = parseResult<Result>(stdout)
    expect(originCalls).toBe(1)
    expect(a).toMatchObject({ misses: 100, loads: 1, coalesced: 99, l2_errors: 0, l2_timeouts: 0 })
    expect(b).toMatchObject({ loads: 0, l2_errors: 0, l2_timeouts: 0 })
    expect(b.l2_hits).toBe(2)
    expect(bAfter).toBe(2_499)
    expect(stdout).toContain('B (ioredis):    read 1999 cents, origin calls still 1 (an L2 hit)')
    expect(prefix).toMatch(/^echostore-example:node-redis:[0-9a-f]{12}:$/)
    expect(await keysUnder(raw(), prefix)).toEqual([])
  })
})
