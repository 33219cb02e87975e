/**
 * EchoStore on a Redis Cluster: two instances of one table (as two services would run them), each
 * with an L2 and a coherence bus built from the cluster's seed nodes, sharing one key space.
 *
 *  1. Instance A reads a cold id with a herd of 100 concurrent callers and `lease` on: one loader
 *     call; instance B, started with it, waits for A's fill and answers from L2: one load in all.
 *  2. A puts a new value: B hears it on the bus (sharded pub/sub on the channel's master) and its
 *     next read is the new value, from L2.
 *  3. The keys are deleted from every master, and a last line
 *     `RESULT {"a":{stats},"b":{stats},"after":..}` is printed (spec/examples-cluster.spec.ts checks it).
 *
 * Run: `npx tsx examples/cluster.ts` with a cluster at `CLUSTER_URLS` (comma-separated seed nodes;
 * default the local one `bash .ci/redis-topology.sh start` makes on 127.0.0.1:7100-7105).
 * Without a reachable cluster it says how to start one and exits with status 1.
 */
import { randomBytes } from 'node:crypto'
import { Cluster } from 'ioredis'
import { createTable } from 'echostore'
import { redisBus, redisL2 } from 'echostore/redis'

const SEEDS = (process.env.CLUSTER_URLS ?? 'redis://127.0.0.1:7100,redis://127.0.0.1:7101,redis://127.0.0.1:7102').split(',')
/** The key space of this run: the L2 prefix, and the bus namespace (so its channel is `<prefix>coherence`). */
const PREFIX = `echostore-example:cluster:${randomBytes(6).toString('hex')}:`

type Listing = { id: string; title: string; loadedBy: string }

/** One instance of the service: its own connections to the cluster, the same key space. */
async function instance(name: string) {
  const onError = (error: unknown) => console.error(`[${name}] Redis: ${error instanceof Error ? error.message : String(error)}`)
  const l2 = redisL2({ url: SEEDS, prefix: PREFIX, onError })
  const bus = redisBus({ url: SEEDS, namespace: PREFIX, onError })
  // Start-up: wait (bounded) until the bus listens, so no change is missed once we serve.
  await bus.subscribed({ timeout: 5_000 })
  const table = createTable<Listing>({ name: 'listings', ttl: 60_000, l2, bus, lease: true })
  let calls = 0
  const loader = async (id: string | number): Promise<Listing> => {
    calls++
    await new Promise((resolve) => setTimeout(resolve, 20))
    return { id: String(id), title: `Listing ${id}`, loadedBy: name }
  }
  return {
    table,
    loader,
    calls: () => calls,
    async close() {
      await table.close()
      await Promise.all([bus.close(), l2.close()])
    },
  }
}

/** Deletes this run's keys from every master. */
async function cleanUp(): Promise<void> {
  const cluster = new Cluster(SEEDS.map((url) => ({ host: new URL(url).hostname, port: Number(new URL(url).port) })))
  for (const node of cluster.nodes('master')) {
    let cursor = '0'
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', `${PREFIX}*`, 'COUNT', 1_000)
      cursor = next
      for (const key of keys) await node.del(key)
    } while (cursor !== '0')
  }
  cluster.disconnect()
}

async function main(): Promise<void> {
  const [a, b] = await Promise.all([instance('A'), instance('B')]).catch((error: unknown) => {
    console.error(`examples/cluster.ts needs a Redis Cluster at ${SEEDS.join(', ')}: ${error instanceof Error ? error.message : String(error)}`)
    console.error('start the local one with: bash .ci/redis-topology.sh start (or set CLUSTER_URLS)')
    process.exit(1)
  })
  try {
    const id = 'sku-42'
    const herd = (x: typeof a) => Array.from({ length: 100 }, () => x.table.fetch(id, x.loader))
    const answers = await Promise.all([...herd(a), ...herd(b)])
    console.log(`herd of 2 × 100 on one cold id: ${a.calls() + b.calls()} load(s), every answer "${answers[0]!.title}" loaded by ${answers[0]!.loadedBy}`)

    await a.table.put(id, { id, title: 'Listing 42, renamed', loadedBy: 'A (put)' })
    // B drops its row when A's put arrives on the bus (within a millisecond or so); its next read comes from L2.
    for (let waited = 0; b.table.stats().coh_applied === 0 && waited < 1_000; waited += 5) await new Promise((resolve) => setTimeout(resolve, 5))
    const after = (await b.table.fetch(id, b.loader))?.title
    console.log(`after A's put, B reads "${after}" (${b.calls()} load(s) in B)`)
    console.log(
      `A: ${JSON.stringify({ loads: a.table.stats().loads, l2_hits: a.table.stats().l2_hits })}  B: ${JSON.stringify({ loads: b.table.stats().loads, l2_hits: b.table.stats().l2_hits, coh_applied: b.table.stats().coh_applied })}`,
    )
    console.log(`RESULT ${JSON.stringify({ a: a.table.stats(), b: b.table.stats(), after })}`)
  } finally {
    await Promise.all([a.close(), b.close()])
    await cleanUp()
  }
}

await main()
