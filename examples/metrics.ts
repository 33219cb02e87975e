/**
 * The counters as Prometheus metrics: serves `GET /metrics` on 127.0.0.1 while a small read load
 * runs against two tables, prints the URL and a sample scrape, and stops by itself.
 *
 * Run:  npx tsx examples/metrics.ts            serves for METRICS_SECONDS (default 20), then exits
 *       npx tsx examples/metrics.ts --once     a bounded load, one scrape, exit (what the test runs)
 *       PORT=0 npx tsx examples/metrics.ts     any free port (default 9464, the exporter convention)
 *
 * Look for: `echostore_<counter>_total{table="..."}` for every counter, the `size`, `inflight` and
 * `hit_rate` gauges, one series per table, and hits + misses equal to the reads the load issued.
 * prom-client is an optional peer dependency of EchoStore: this example imports it, the library never does.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import * as promClient from 'prom-client'
import { type Id, type Table, createTable } from 'echostore'
import { registerTableMetrics } from 'echostore/prometheus'

const once = process.argv.includes('--once')
const port = Number(process.env.PORT ?? 9464)
if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new RangeError(`PORT must be an integer in 0..65535, got ${process.env.PORT}`)
const seconds = Number(process.env.METRICS_SECONDS ?? 20)
if (!(seconds > 0 && seconds <= 3_600)) throw new RangeError(`METRICS_SECONDS must be in (0, 3600], got ${process.env.METRICS_SECONDS}`)

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

// Two tables, each exported with its own `table` label in one registry.
const registry = new promClient.Registry()
const sets = createTable<string[]>({ name: 'emoji_sets', ttl: 150, jitter: 0.2, sweepInterval: 100 })
const catalog = createTable<{ sku: number }, number>({ name: 'catalog', ttl: 2_000, jitter: 0.1 })
const unregister = [registerTableMetrics(promClient, sets, { registry }), registerTableMetrics(promClient, catalog, { registry })]

// A slow origin: 5 ms per load.
const loadSet = async (id: string) => (await sleep(5), [`${id}:🎉`, `${id}:🥳`])
const loadSku = async (id: number) => (await sleep(5), { sku: Number(id) })

/** Reads issued per table, to check the scrape against. */
const issued = { emoji_sets: 0, catalog: 0 }

/** One round of reads: a hot emoji set, a few cold ones, and a spread of catalog skus. */
async function round(n: number): Promise<void> {
  const reads: Promise<unknown>[] = []
  const read = <V, K extends Id>(table: Table<V, K>, id: K, loader: (id: K) => Promise<V>) => {
    issued[table.name as keyof typeof issued]++
    reads.push(table.fetch(id, loader))
  }
  for (let i = 0; i < 20; i++) read(sets, 'party', loadSet)
  for (let i = 0; i < 5; i++) read(sets, `set-${(n * 5 + i) % 40}`, loadSet)
  for (let i = 0; i < 10; i++) read(catalog, (n * 7 + i * 13) % 200, loadSku)
  await Promise.all(reads)
}

const server = createServer((request, response) => {
  if (request.method === 'GET' && request.url === '/metrics') {
    registry.metrics().then(
      (text) => response.writeHead(200, { 'Content-Type': registry.contentType }).end(text),
      (error: unknown) => response.writeHead(500).end(String(error)),
    )
  } else {
    response.writeHead(404).end('try GET /metrics\n')
  }
})
await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', resolve))
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`
console.log(`serving ${url}  (${once ? '--once: one bounded load, one scrape, then exit' : `curl it; stops by itself after ${seconds} s`})`)

// The read load: bounded rounds with --once; otherwise until the deadline.
const deadline = Date.now() + seconds * 1_000
let rounds = 0
let printed = false
while (once ? rounds < 100 : Date.now() < deadline) {
  await round(rounds++)
  await sleep(2)
  if (!printed && (once ? rounds === 100 : rounds === 200)) {
    printed = true
    const text = await (await fetch(url)).text()
    console.log(`\nsample scrape of ${url} after ${rounds} rounds (${issued.emoji_sets} + ${issued.catalog} reads), echostore series only:`)
    for (const line of text.split('\n')) if (line.startsWith('echostore_')) console.log(`  ${line}`)
    for (const table of [sets, catalog]) {
      const stats = table.stats()
      console.log(`${table.name}: reads issued ${issued[table.name as keyof typeof issued]}, hits + misses ${stats.hits + stats.misses}, loads ${stats.loads}`)
    }
  }
}

for (const off of unregister) off()
await Promise.all([sets.close(), catalog.close()])
server.closeAllConnections()
await new Promise<void>((resolve) => server.close(() => resolve()))
console.log(`\nstopped after ${rounds} rounds`)
console.log(`RESULT ${JSON.stringify({ url, rounds, issued, emoji_sets: sets.stats(), catalog: catalog.stats() })}`)
