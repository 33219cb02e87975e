/**
 * The smoke suite of the installed package, run as it is under Node, Bun and Deno (`RUNTIME` names
 * the one running it): both entries import; a herd of 100 costs one load; `getMany` is one batch
 * call; two tables share a `memoryL2`; then, against Redis (REDIS_URL), a table with a Redis L2, a
 * Redis bus and `lease` shares them with a Node process (peer.mjs, started with NODE_BINARY): this
 * runtime holds the lease of an id while its loader waits, the peer's fetch of the id waits on that
 * lease and is answered by this runtime's fill, and an invalidation from here reaches the peer over
 * the bus. The keys are deleted and
 * every connection closed, so the process exits by itself.
 */
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { createInterface } from 'node:readline'
import { createTable, memoryL2 } from 'echostore'
import { redisBus, redisL2 } from 'echostore/redis'
import { Redis } from 'ioredis'
import { assertHerdOfOne } from './herd.mjs'

const runtime = process.env.RUNTIME ?? 'node'
const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
const fail = (what) => {
  throw new Error(`${runtime}: ${what}`)
}

// A herd, getMany, memoryL2.
const herd = createTable({ name: 'smoke' })
await assertHerdOfOne(herd, runtime)
await herd.close()

const batches = []
const products = createTable({
  name: 'products',
  batchLoader: async (ids) => {
    batches.push([...ids])
    return ids.map((id) => ({ id }))
  },
})
const page = await products.getMany([3, 1, 4, 1, 5])
if (JSON.stringify(page) !== JSON.stringify([3, 1, 4, 1, 5].map((id) => ({ id })))) fail(`getMany answered ${JSON.stringify(page)}`)
if (batches.length !== 1 || JSON.stringify([...batches[0]].sort()) !== '[1,3,4,5]') fail(`getMany made the batch calls ${JSON.stringify(batches)}, not one call for 1, 3, 4, 5`)
await products.close()
console.log(`pass ${runtime}: getMany of 5 ids (4 distinct) made one batch loader call`)

const shared = memoryL2()
const [writer, reader] = ['writer', 'reader'].map(() => createTable({ name: 'shared', l2: shared }))
await writer.fetch('k', () => 'from the writer')
const fromL2 = await reader.fetch('k', () => fail('the second table called its loader; memoryL2 should have answered'))
if (fromL2 !== 'from the writer' || reader.stats().l2_hits !== 1) fail(`the second table was not answered by memoryL2 (${JSON.stringify(reader.stats())})`)
await writer.close()
await reader.close()
await shared.close()
console.log(`pass ${runtime}: two tables share a memoryL2`)

// A Redis L2, bus and lease shared with a Node process.
const run = randomBytes(6).toString('hex')
const config = { url, runtime, prefix: `echostore-pack-test:${run}:`, channel: `echostore-pack-test:${run}:coherence` }
const l2 = redisL2({ url, prefix: config.prefix })
const bus = redisBus({ url, channel: config.channel })
await bus.subscribed()
const table = createTable({ name: 'leased', ttl: 60_000, l2, bus, lease: { ttl: 10_000, wait: 20_000 } })

const peer = spawn(process.env.NODE_BINARY ?? 'node', ['peer.mjs', JSON.stringify(config)], { stdio: ['pipe', 'pipe', 'inherit'] })
const exited = new Promise((resolve) => peer.on('exit', (code, signal) => resolve(code ?? signal)))
const lines = createInterface({ input: peer.stdout })[Symbol.asyncIterator]()
/** The peer's next line, which must be `expected`. */
async function expectLine(expected) {
  const { value, done } = await lines.next()
  if (done || value !== expected) fail(`the Node peer said ${done ? 'nothing more' : JSON.stringify(value)}, expected ${JSON.stringify(expected)}`)
}
const tell = (line) => peer.stdin.write(`${line}\n`)

const admin = new Redis(url, { maxRetriesPerRequest: 1 })
try {
  await expectLine('ready')
  let loading
  let release
  const loaderCalled = new Promise((resolve) => (loading = resolve))
  const released = new Promise((resolve) => (release = resolve))
  const held = table.fetch('cold', async () => {
    loading()
    await released
    return { by: runtime }
  })
  await loaderCalled // this runtime holds the lease of 'cold', and its loader waits
  tell('fetch')
  await expectLine('waiting') // the Node process found the lease taken and waits for the fill
  release()
  if ((await held)?.by !== runtime) fail('the lease holder did not get its own load')
  await expectLine('answered')
  const stats = table.stats()
  if (stats.loads !== 1 || stats.lease_acquired !== 1) fail(`the fetch should have held the lease and loaded once (loads ${stats.loads}, lease_acquired ${stats.lease_acquired})`)
  console.log(`pass ${runtime}: holding the lease of an id, its one load answered a Node process's fetch of the id through the Redis L2, with no load there`)

  tell('listen')
  await expectLine('listening')
  const change = await table.invalidate('cold')
  if (!change.broadcast || change.l2 !== 'written') fail(`invalidate answered ${JSON.stringify(change)}`)
  await expectLine('heard')
  console.log(`pass ${runtime}: the Node process heard this runtime's invalidation on the Redis bus`)
  tell('exit')
  peer.stdin.end()
  const code = await exited
  if (code !== 0) fail(`the Node peer exited with ${code}`)
} finally {
  peer.stdin.end()
  await table.close()
  await l2.close()
  await bus.close()
  let cursor = '0'
  do {
    const [next, keys] = await admin.scan(cursor, 'MATCH', `${config.prefix}*`, 'COUNT', 500)
    cursor = next
    if (keys.length > 0) await admin.del(...keys)
  } while (cursor !== '0')
  await admin.quit()
}
