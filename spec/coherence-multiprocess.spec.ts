/**
 * Coherence across real processes: three Node child processes (spec/support/coherence-node.ts),
 * each with its own table, a Redis L2 and a Redis bus on one prefix and channel, driven over IPC.
 *
 * - A put in one process is seen by the other two: each receives the message (a `coherence` event,
 *   applied) within a bound, and its next fetch returns the new value, not its stale L1 row. The
 *   propagation delay (from the put resolving in the writer to the event in each reader, on the
 *   machine's wall clock) is collected over many puts and printed as p50/p99; it is not asserted.
 * - A killed subscriber connection (`CLIENT KILL ID`, as a network failure would) makes that
 *   process drop its L1 rows (coh_gaps, coh_dropped), and it keeps serving through L2, and hears
 *   the bus again afterwards.
 * - A tag invalidation in one process (a depot's stock changed): a process that never read the
 *   depot's rows gets the new values at once (Redis holds the tag's version), and the others get
 *   them once the bus delivered the invalidation, for every row carrying the tag.
 * - Every put reports `applied` and `broadcast` (Redis accepted the publish).
 * - Every process closes its table, bus and L2 (reporting no error while closing) and exits by
 *   itself with code 0.
 *
 * Nothing hangs: every wait has a deadline that fails the test with what it was waiting for, and
 * afterAll kills any child still running.
 */
import { Redis } from 'ioredis'
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { Id, Stats } from '../src/index.js'
import type { Command, NodeConfig, PutReply, Report } from './support/coherence-node.js'
import { IpcChild, within } from './support/ipc-child.js'
import { REDIS_URL, cleanPrefix, describeRedis, testPrefix } from './support/redis.js'

const TABLE = 'emoji_sets'
/** Most any single step may take (a reply, an event, an exit) before the test fails. */
const STEP_DEADLINE_MS = 10_000
const PUTS = 200

type Event = Extract<Report, { type: 'coherence' | 'gap' | 'error' }>

/** The parent's handle on one child: commands with replies, and the events it reported. */
class Node extends IpcChild<Command, Event> {
  constructor(label: string, config: NodeConfig) {
    super(label, 'spec/support/coherence-node.ts', config, STEP_DEADLINE_MS)
  }

  fetch(id: Id): Promise<string | null> {
    return this.request({ op: 'fetch', id })
  }

  stats(): Promise<Stats> {
    return this.request({ op: 'stats' })
  }

  coherence(id: Id, version: number): Promise<Extract<Event, { type: 'coherence' }>> {
    return this.event((e): e is Extract<Event, { type: 'coherence' }> => e.type === 'coherence' && e.id === id && e.version === version, `coherence event for ${JSON.stringify(id)} v${version}`)
  }
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!
}

describeRedis('coherence across three processes on one Redis', () => {
  const prefix = testPrefix('coherence-mp')
  const channel = `${prefix}bus`
  const nodes: Node[] = []
  let admin: Redis
  let A: Node, B: Node, C: Node

  beforeAll(async () => {
    admin = new Redis(REDIS_URL)
    for (const label of ['A', 'B', 'C']) {
      const config: NodeConfig = {
        label,
        url: REDIS_URL,
        prefix,
        channel,
        table: TABLE,
        connectionName: `${prefix.replaceAll(':', '-')}${label}`,
      }
      nodes.push(new Node(label, config))
    }
    ;[A, B, C] = nodes as [Node, Node, Node]
    await within(Promise.all(nodes.map((n) => n.ready)), 30_000, 'three processes ready (bus subscribed)')
  }, 40_000)

  afterAll(async () => {
    for (const node of nodes) if (node.child.exitCode === null && node.child.signalCode === null) node.child.kill('SIGKILL')
    await cleanPrefix(admin, prefix)
    await admin.quit()
  })

  it('a put in one process is seen by the other two: the message arrives, and their next fetch returns the new value', async () => {
    const id = 'party'
    expect(await A.request<PutReply>({ op: 'put', id, value: 'initial' })).toMatchObject({ applied: true, broadcast: true })
    for (const node of nodes) expect(await node.fetch(id)).toBe('initial') // every process holds an L1 row
    const fromResolved: number[] = []
    const fromStart: number[] = []

    for (let i = 0; i < PUTS; i++) {
      const writer = nodes[i % 3]!
      const readers = nodes.filter((n) => n !== writer)
      const value = `v${i}`
      const put = await writer.request<PutReply>({ op: 'put', id, value })
      expect(put).toMatchObject({ applied: true, broadcast: true })
      const seen = await Promise.all(readers.map((r) => r.coherence(id, put.version)))
      for (const event of seen) {
        expect(event.applied).toBe(true) // newer than the row it held
        fromResolved.push(event.at - put.resolved)
        fromStart.push(event.at - put.start)
      }
      // Not the stale L1 row: each reader's next fetch returns the new value (from L2).
      for (const reader of readers) expect(await reader.fetch(id)).toBe(value)
      expect(await writer.fetch(id)).toBe(value) // the writer's own row was replaced by its put
    }

    const stats = await Promise.all(nodes.map((n) => n.stats()))
    const applied = stats.reduce((sum, s) => sum + s.coh_applied, 0)
    expect(applied).toBe(2 * (PUTS + 1)) // the initial put and every later one, in the two others each
    for (const s of stats) expect(s).toMatchObject({ coh_stale: 0, coh_invalid: 0, coh_gaps: 0, bus_errors: 0 })

    const ms = (x: number) => `${x.toFixed(3)} ms`
    const resolvedSorted = [...fromResolved].sort((a, b) => a - b)
    const startSorted = [...fromStart].sort((a, b) => a - b)
    console.log(
      `[coherence-multiprocess] propagation over ${PUTS} puts (${fromResolved.length} deliveries):\n` +
        `  from the put resolving in the writer to the reader's coherence event: p50 ${ms(quantile(resolvedSorted, 0.5))}, ` +
        `p99 ${ms(quantile(resolvedSorted, 0.99))}, max ${ms(resolvedSorted.at(-1)!)}\n` +
        `  from the put being called (after the source write) to the event:      p50 ${ms(quantile(startSorted, 0.5))}, ` +
        `p99 ${ms(quantile(startSorted, 0.99))}, max ${ms(startSorted.at(-1)!)}\n` +
        `  (negative: the message reached the reader before the writer's publish reply reached the writer)`,
    )
  }, 120_000)

  it("a tag invalidation in one process: every row carrying the tag is new everywhere, at once through Redis and in the others' rows once the bus delivered", async () => {
    const rounds = 6
    for (let round = 0; round < rounds; round++) {
      const group = `depot-${round % 2}`
      // Fresh ids each round, so the one process that never read them holds none in L1.
      const ids = Array.from({ length: 5 }, (_, i) => `${group}/round-${round}-sku-${i}`)
      const writer = nodes[round % 3]!
      const [early, late] = nodes.filter((n) => n !== writer) as [Node, Node]
      await writer.request({ op: 'source', ids, value: 'before' })
      // The writer and `early` hold the rows in L1, tagged with the group by their loaders (or from L2).
      for (const id of ids) {
        expect(await writer.fetch(id)).toBe('before')
        expect(await early.fetch(id)).toBe('before')
      }
      const heardBefore = (await early.stats()).tag_invalidations
      const value = `round ${round}`
      const update = await writer.request<PutReply>({ op: 'update-group', group, ids, value })
      expect(update).toMatchObject({ applied: true, broadcast: true })
      // At once: `late` through Redis (the entries there are older than the tag: it loads), and the writer's own rows.
      const lateBefore = await late.stats()
      for (const id of ids) expect(await late.fetch(id)).toBe(value)
      const lateAfter = await late.stats()
      expect([lateAfter.tag_stale - lateBefore.tag_stale, lateAfter.loads - lateBefore.loads]).toEqual([ids.length, ids.length])
      for (const id of ids) expect(await writer.fetch(id)).toBe(value)
      // `early`'s own rows go once the bus delivered the tag.
      await within(
        (async () => {
          while ((await early.stats()).tag_invalidations <= heardBefore) await new Promise((resolve) => setImmediate(resolve))
        })(),
        STEP_DEADLINE_MS,
        `the invalidation of ${group} reaching ${early.label}`,
      )
      for (const id of ids) expect(await early.fetch(id)).toBe(value)
    }
    const stats = await Promise.all(nodes.map((n) => n.stats()))
    for (const s of stats) expect(s).toMatchObject({ coh_invalid: 0, coh_gaps: 0, bus_errors: 0 })
    // Every round, `late` found each of the five entries in Redis older than the tag.
    expect(stats.reduce((sum, s) => sum + s.tag_stale, 0)).toBeGreaterThanOrEqual(5 * rounds)
  }, 60_000)

  it('a killed subscriber connection drops that process’s L1 rows; it keeps serving, and hears the bus again', async () => {
    const ids = Array.from({ length: 20 }, (_, i) => `gap-${i}`)
    for (const id of ids) await A.request({ op: 'put', id, value: `${id}:1` })
    for (const id of ids) expect(await B.fetch(id)).toBe(`${id}:1`)
    const before = await B.stats()
    expect(before.size).toBeGreaterThanOrEqual(ids.length)

    const { dropped } = await B.request<{ killed: string; dropped: number }>({ op: 'kill-subscriber' })
    const after = await B.stats()
    // The rows just read are fresh, so the gap finds them all; rows of earlier tests may have
    // expired and been swept meanwhile, so the gap's count is bounded by these, not by `before.size`.
    expect(dropped).toBeGreaterThanOrEqual(ids.length)
    expect(after.coh_gaps).toBeGreaterThanOrEqual(1)
    expect(after.coh_dropped - before.coh_dropped).toBeGreaterThanOrEqual(dropped)

    // Still serving: every dropped row comes back from L2, without the loader.
    for (const id of ids) expect(await B.fetch(id)).toBe(`${id}:1`)
    const served = await B.stats()
    expect(served.l2_hits - after.l2_hits).toBe(ids.length)
    expect(served.loads).toBe(after.loads)

    // And the bus is back: a put elsewhere reaches B, whose next fetch returns it.
    const put = await C.request<PutReply>({ op: 'put', id: ids[0]!, value: 'after the gap' })
    expect(put).toMatchObject({ applied: true, broadcast: true })
    expect((await B.coherence(ids[0]!, put.version)).applied).toBe(true)
    expect(await B.fetch(ids[0]!)).toBe('after the gap')
    // The others were not disturbed.
    for (const node of [A, C]) expect((await node.stats()).coh_gaps).toBe(0)
  }, 60_000)

  it('every process closes its table, bus and L2 and exits by itself with code 0', async () => {
    // No table reported an error (loader, owner) while serving.
    for (const node of nodes)
      expect(
        node.events.filter((e) => e.type === 'error'),
        node.label,
      ).toEqual([])
    await Promise.all(nodes.map((n) => n.request({ op: 'exit' })))
    // Nor while closing: the owner ignores xstate's own stop event (it once reported it as an error).
    // A child reports its events before its reply, over the same ordered IPC channel.
    for (const node of nodes)
      expect(
        node.events.filter((e) => e.type === 'error'),
        `${node.label} closing`,
      ).toEqual([])
    const exits = await within(Promise.all(nodes.map((n) => n.exited)), STEP_DEADLINE_MS, 'the three processes exiting by themselves')
    expect(exits).toEqual([
      { code: 0, signal: null },
      { code: 0, signal: null },
      { code: 0, signal: null },
    ])
    // No connection of theirs is left on the server (each closed before its process ended; the
    // server may take a round trip or two to forget a socket that closed).
    const named = async () => String(await admin.call('CLIENT', 'LIST')).includes(prefix.replaceAll(':', '-'))
    let left = await named()
    for (let i = 0; i < 100 && left; i++) left = await named()
    expect(left).toBe(false)
  }, 30_000)
})
