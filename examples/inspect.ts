/**
 * Watching the owner: the `inspect` option hands an xstate inspection observer to the table's
 * owner actor, which then reports every batch of messages it receives (one per turn of the event
 * loop) and the state it commits. This example prints each batch as it arrives while a herd, a
 * second herd on a warm row, a put and a failing load run, then the counters.
 *
 * Run:  npx tsx examples/inspect.ts
 *
 * Look for: a herd of 100 plain readers arriving as ONE `miss ×100` message (the mailbox batches a
 * turn's misses per id); its result (`flight.done`, the flight itself) as the one message of a
 * later turn (the loader's call is counted as it happens, with no message); the put as three
 * messages (its start, its write to the rows, its end); and the counters matching what the batches showed.
 */
import { type OwnerInspectionEvent, createTable } from 'echostore'

/** One line per message of a batch, as the owner received it. */
function describeMessage(message: { type: string; id?: unknown; count?: number; counter?: string; result?: { ok: boolean } }): string {
  switch (message.type) {
    case 'miss':
      return `miss ${JSON.stringify(message.id)} ×${message.count}`
    case 'flight.done':
      return `flight.done (${message.result?.ok === true ? 'value' : 'error'})`
    case 'count':
      return `count ${message.counter}`
    default:
      return message.id === undefined ? message.type : `${message.type} ${JSON.stringify(message.id)}`
  }
}

let batches = 0
let messages = 0
const inspect = (event: OwnerInspectionEvent): void => {
  if (event.type !== '@xstate.event' || event.event.type !== 'batch') return
  const batch = (event.event as unknown as { messages: { type: string }[] }).messages
  batches++
  messages += batch.length
  console.log(`batch ${String(batches).padStart(2)}: ${batch.map(describeMessage).join(', ')}`)
}

const table = createTable<string>({ name: 'inspected', inspect })
const slow = (value: string) => () => new Promise<string>((resolve) => setTimeout(() => resolve(value), 5))

console.log('— a herd of 100 readers of one cold id')
await Promise.all(Array.from({ length: 100 }, () => table.fetch('party', slow('🎉'))))
console.log('— 100 readers of the same id, now a live row (hits: no message at all)')
await Promise.all(Array.from({ length: 100 }, () => table.fetch('party', slow('never'))))
console.log('— a put')
await table.put('party', '🥳')
console.log('— a load that fails')
await table.fetch('broken', () => Promise.reject(new Error('origin down'))).catch(() => {})

const stats = table.stats()
console.log('— close (the owner is told once, then stops)')
await table.close()
console.log(`— ${batches} batches, ${messages} messages; hits ${stats.hits}, misses ${stats.misses}, coalesced ${stats.coalesced}, loads ${stats.loads}, load_errors ${stats.load_errors}`)
console.log(`RESULT ${JSON.stringify({ batches, messages, hits: stats.hits, misses: stats.misses, coalesced: stats.coalesced, loads: stats.loads, load_errors: stats.load_errors })}`)
