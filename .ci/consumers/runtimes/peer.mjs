/**
 * The Node process of the runtimes' smoke suite (smoke.mjs starts it): a table on the same Redis L2,
 * bus and lease as the runtime under test, driven by lines on stdin, answering on stdout (`ready`
 * once its bus listens).
 *   fetch   → fetches 'cold', whose lease the runtime holds: `waiting` once its lease call found the
 *             lease taken (seen on the `echostore:l2` tracing channel), then `answered` when the
 *             runtime's fill answered it with no load here (anything else: exit 1, saying why)
 *   listen  → `listening`; then `heard` when an invalidation of 'cold' arrives on the bus
 *   exit    → closes everything and exits 0
 */
import { tracingChannel } from 'node:diagnostics_channel'
import { createInterface } from 'node:readline'
import { createTable } from 'echostore'
import { redisBus, redisL2 } from 'echostore/redis'

const { url, prefix, channel, runtime } = JSON.parse(process.argv[2])
const l2 = redisL2({ url, prefix })
const bus = redisBus({ url, channel })
await bus.subscribed()
const table = createTable({ name: 'leased', ttl: 60_000, l2, bus, lease: { ttl: 10_000, wait: 20_000 } })
const say = (line) => process.stdout.write(`${line}\n`)
const die = (why) => {
  console.error(`peer: ${why}`)
  process.exit(1)
}
say('ready')

for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'fetch') {
    const l2Calls = tracingChannel('echostore:l2')
    const handlers = {
      asyncEnd(context) {
        if (!String(context.op).startsWith('leases.')) return
        l2Calls.unsubscribe(handlers)
        say('waiting')
      },
    }
    l2Calls.subscribe(handlers)
    table
      .fetch('cold', () => die(`called its loader while ${runtime} held the lease`))
      .then((answer) => {
        const stats = table.stats()
        if (answer?.by !== runtime) die(`the fetch behind ${runtime}'s lease answered ${JSON.stringify(answer)}`)
        if (stats.loads !== 0 || stats.lease_waited !== 1) die(`the fetch behind ${runtime}'s lease was not answered by its fill (loads ${stats.loads}, lease_waited ${stats.lease_waited})`)
        say('answered')
      }, die)
  } else if (line === 'listen') {
    const heard = (event) => {
      if (event.id !== 'cold' || event.kind !== 'invalidate') return
      table.events.off('coherence', heard)
      say('heard')
    }
    table.events.on('coherence', heard)
    say('listening')
  } else if (line === 'exit') {
    break
  }
}
process.stdin.destroy()
await table.close()
await l2.close()
await bus.close()
