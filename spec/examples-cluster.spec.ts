/**
 * Runs `examples/cluster.ts` against the local Redis Cluster and checks what it prints: one load for
 * the herd across both instances, the other answered from L2, and the put heard on the bus.
 */
import { expect, it } from 'vitest'
import type { Stats } from '../src/index.js'
import { parseResult, runExample } from './support/run-example.js'
import { CLUSTER_URLS, describeTopology } from './support/topology.js'

type Result = { a: Stats; b: Stats; after: string }

describeTopology('examples/cluster.ts', () => {
  it('one load for a herd across two instances on the cluster; the put reaches the other instance', async () => {
    const { code, stdout, stderr } = await runExample('cluster.ts', { CLUSTER_URLS: CLUSTER_URLS.join(',') })
    expect(code, `stderr:\n${stderr}\nstdout:\n${stdout}`).toBe(0)
    const { a, b, after } = parseResult<Result>(stdout)
    expect(a.loads + b.loads).toBe(1)
    expect(a.l2_hits + b.l2_hits).toBeGreaterThanOrEqual(1)
    expect(a.l2_errors + b.l2_errors + a.l2_timeouts + b.l2_timeouts).toBe(0)
    expect(after).toBe('Listing 42, renamed')
    expect(b.coh_applied).toBeGreaterThanOrEqual(1)
    expect(stdout).toMatch(/herd of 2 × 100 on one cold id: 1 load\(s\)/)
  })
})
