/**
 * The table operations beside `fetch`, as a catalog service's admin endpoints would use them: two
 * instances of a `products` table (numeric ids: `createTable<Product, number>`) share an L2 and a
 * bus, as two processes share Redis.
 *
 *   peek(id) / has(id)   what an instance holds right now, without a load or a counter
 *   size                 rows held (the same figure as stats().size)
 *   invalidate(id)       the one way to delete an id: a tombstone in both layers, every instance told
 *   clear()              the whole table, in every instance and in L2, at once
 *
 * Run:  npx tsx examples/admin.ts
 *
 * Look for: `peek` answering only what is live; an invalidate on A emptying B's row for the id; a
 * clear on A dropping B's rows (`clears` 1 on both) and sending the next reads to the origin,
 * never to an L2 entry written before the clear.
 */
import { createTable, localBus, memoryL2 } from 'echostore'

interface Product {
  id: number
  name: string
  price: number
}

const l2 = memoryL2()
const bus = localBus()
const [a, b] = ['A', 'B'].map(() => createTable<Product, number>({ name: 'products', ttl: 60_000, l2, bus }))
let originCalls = 0
const origin = async (id: number): Promise<Product> => {
  originCalls++
  return { id, name: `Product ${id}`, price: 100 + id }
}

for (const id of [1, 2, 3]) await a!.fetch(id, origin)
await b!.fetch(1, origin) // from L2: A filled it
console.log(`A holds ${a!.size} rows, B holds ${b!.size}; origin calls so far: ${originCalls}`)
console.log(`A.peek(2) = ${JSON.stringify(a!.peek(2))}, B.peek(2) = ${JSON.stringify(b!.peek(2))} (B never read it), B.has(1) = ${b!.has(1)}`)

await a!.invalidate(1)
console.log(`after A.invalidate(1): A.has(1) = ${a!.has(1)}, B.has(1) = ${b!.has(1)} (the bus told B)`)

const cleared = await a!.clear()
const sizeAfterClear = [a!.size, b!.size]
console.log(`after A.clear(): ${JSON.stringify(cleared)}; A holds ${sizeAfterClear[0]} rows, B holds ${sizeAfterClear[1]}; clears A ${a!.stats().clears}, B ${b!.stats().clears}`)
const [callsBefore, hitsBefore] = [originCalls, b!.stats().l2_hits]
await b!.fetch(2, origin) // L2 held id 2 from before the clear: never read again
const afterClear = { originCalls: originCalls - callsBefore, l2Hits: b!.stats().l2_hits - hitsBefore }
console.log(`B.fetch(2) after the clear: ${afterClear.originCalls} origin call, ${afterClear.l2Hits} L2 hits (L2's entry for 2 was written before the clear)`)

const result = { sizeAfterClear, clears: [a!.stats().clears, b!.stats().clears], afterClear, cleared }
await Promise.all([a!.close(), b!.close()])
await Promise.all([l2.close(), bus.close()])
console.log(`RESULT ${JSON.stringify(result)}`)
