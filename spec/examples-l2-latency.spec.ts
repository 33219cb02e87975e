/**
 * Runs `examples/l2-latency.ts` at a small size and checks what its table claims against the
 * tables' own counters: the L2-hit fills made no loader call and were all L2 hits, the loader fills
 * made one load per id, and nothing failed. Its timings are printed, never asserted here.
 */
import { expect, it } from 'vitest'
import { REDIS_URL, describeRedis } from './support/redis.js'
import { parseResult, runExample } from './support/run-example.js'

type Row = { case: string; loads: number; l2_hits: number; l2_failures: number; median: number }

describeRedis('examples/l2-latency.ts', () => {
  it('its L2-hit fills cost no load, its loader fills one load each, and no L2 call failed', async () => {
    const { code, stdout, stderr } = await runExample('l2-latency.ts', { REDIS_URL, L2_LATENCY_N: '100' })
    expect(code, `stderr:\n${stderr}\nstdout:\n${stdout}`).toBe(0)
    const rows = parseResult<Row[]>(stdout)
    const hit = rows.find((r) => r.case.startsWith('L2 hit'))!
    expect(hit).toMatchObject({ loads: 0, l2_failures: 0 })
    expect(hit.l2_hits).toBeGreaterThanOrEqual(100)
    for (const row of rows) expect(row.l2_failures).toBe(0)
    expect(stdout).toMatch(/An L2-hit fill takes \d+ µs \(median\)/)
    expect(stdout).toMatch(/Cleaned up \d+ key\(s\)/)
  })
})
