/**
 * The N+1 read, as a product-listing page makes it: a page shows 24 products, and the catalog
 * database answers `WHERE id IN (...)` for the price of one query. The table knows its batch
 * loader (`createTable({ batchLoader })`), so a page is one `getMany` and one origin call for the
 * ids the cache lacks, however many pages render at once.
 *
 * Run:  npx tsx examples/batch.ts
 *
 * Look for: three pages rendered together cost one origin call (their misses went out as one
 * batch); the next three pages, overlapping the first ones, ask only for ids not yet cached; a
 * product the database does not have answers `undefined` (cached as absent), and a product whose
 * row is broken fails alone; resolvers that await different depths before reading (an auth check,
 * a parent field) still share one call, as with DataLoader: a batch covers one tick.
 */
import { type BatchLoader, createTable } from 'echostore'

interface Product {
  id: number
  name: string
  price: number
}

/** The catalog database: one query answers many ids (id 13 is missing; id 66 is a broken row). */
const queries: number[][] = []
const productsByIds: BatchLoader<Product | undefined, number> = async (ids) => {
  queries.push(ids)
  await new Promise((resolve) => setTimeout(resolve, 5)) // one round trip to the database
  return new Map(ids.filter((id) => id !== 13).map((id) => [id, id === 66 ? new Error(`product ${id}: row fails validation`) : { id, name: `product ${id}`, price: id * 100 }]))
}

const products = createTable<Product | undefined, number>({ name: 'products', ttl: 60_000, batchLoader: productsByIds })
const page = (n: number) => Array.from({ length: 24 }, (_, i) => n * 12 + i) // pages overlap by half

// Three pages rendered at once: their misses go to the database together.
const first = await Promise.all([0, 1, 2].map((n) => products.getMany(page(n))))
const shown = new Set(
  first
    .flat()
    .filter((product) => product !== undefined)
    .map((product) => product.id),
)
console.log(`pages 0-2: ${shown.size} distinct products shown (id 13 is absent), ${queries.length} origin call for ${queries[0]!.length} ids`)

// The next three overlap the first: only the ids not cached yet are asked for.
const next = await Promise.allSettled([2, 3, 4].map((n) => products.getMany(page(n))))
const failedPages = next.filter((outcome) => outcome.status === 'rejected').length
console.log(`pages 2-4: ${queries.length - 1} more origin call for ${queries.at(-1)!.length} ids (the rest were hits); ${failedPages} page failed: page 4 holds product 66, whose row is broken`)

// A missing product answers undefined; a broken one fails alone, so read a page of them with allSettled.
// (A failure is not cached: 66 is asked of the database again, in one more call.)
const beforeSingles = queries.length
const settled = await Promise.allSettled([12, 13, 66].map((id) => products.get(id)))
const retried = queries.slice(beforeSingles).flat()
console.log(
  `ids 12, 13, 66: ${settled.map((s) => (s.status === 'fulfilled' ? (s.value?.name ?? 'absent') : `failed (${(s.reason as Error).message})`)).join('; ')} (${queries.length - beforeSingles} more origin call, for ${retried.join(', ')}: a failure is not cached)`,
)

// GraphQL-style resolvers: each awaits something first (0, 2 and 4 promise hops), then reads.
const resolve = async (id: number, hops: number) => {
  for (let i = 0; i < hops; i++) await Promise.resolve() // an auth check, a parent field
  return products.get(id)
}
const callsBefore = queries.length
await Promise.all([100, 101, 102].map((id, i) => resolve(id, i * 2)))
const resolverCalls = queries.length - callsBefore
console.log(`ids 100-102, read 0, 2 and 4 awaits deep: ${resolverCalls} origin call for ${queries.at(-1)!.length} ids`)

const stats = products.stats()
console.log(`stats: hits ${stats.hits}, misses ${stats.misses}, batch_loads ${stats.batch_loads}, batch_ids ${stats.batch_ids}, loads ${stats.loads}`)
const result = { originCalls: queries.length, idsAsked: queries.flat().length, firstBatch: queries[0]!.length, batchLoads: stats.batch_loads, outcomes: settled.map((s) => s.status), resolverCalls }
await products.close()
console.log(`RESULT ${JSON.stringify(result)}`)
