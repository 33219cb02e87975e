/**
 * The multi-process lease herd on the local Redis Cluster (`.ci/redis-topology.sh`): four Node
 * processes (spec/support/lease-node.ts), each given the url of one cluster node (the cluster is
 * detected), 200 concurrent readers each of one cold id per round: exactly one load across the
 * processes in every round, and every reader gets that answer.
 */
import { afterAll, beforeAll, expect, it } from 'vitest'
import { within } from './support/ipc-child.js'
import { LeaseNode, herdRound, sumOf } from './support/lease-nodes.js'
import { testPrefix } from './support/redis.js'
import { CLUSTER_URLS, describeTopology } from './support/topology.js'

const ROUNDS = 5
const READERS = 200

describeTopology('leases across four processes on a Redis Cluster', () => {
  const prefix = testPrefix('lease-cluster')
  const nodes: LeaseNode[] = []

  beforeAll(async () => {
    for (const [i, label] of ['A', 'B', 'C', 'D'].entries()) {
      // Each process starts from another node: the cluster is found from any of them.
      nodes.push(new LeaseNode(label, { label, url: CLUSTER_URLS[i]!, prefix, channel: `${prefix}bus`, table: 'availability', lease: { ttl: 1_500, wait: 6_000 } }))
    }
    await within(Promise.all(nodes.map((n) => n.ready)), 30_000, 'four processes ready')
  }, 40_000)

  afterAll(() => {
    for (const node of nodes) if (node.alive) node.child.kill('SIGKILL')
  })

  it(`4 processes × ${READERS} readers of one cold id: one load per herd, in each of ${ROUNDS} rounds`, async () => {
    for (let round = 0; round < ROUNDS; round++) await herdRound(nodes, round, READERS)
    const stats = await Promise.all(nodes.map((n) => n.stats()))
    expect(sumOf(stats, 'loads')).toBe(ROUNDS)
    expect(sumOf(stats, 'lease_acquired')).toBe(ROUNDS)
    expect(sumOf(stats, 'l2_hits')).toBe(3 * ROUNDS)
    expect(sumOf(stats, 'l2_errors') + sumOf(stats, 'l2_timeouts')).toBe(0)
  }, 120_000)
})
