/**
 * Tenants as namespaces of one table: a price-list service for several shops keeps every shop's
 * prices in one table (one owner, one sweeper, one capacity, one L2), each shop in a namespace of
 * its own, and tags each price with its supplier. A shop's new price list clears its namespace
 * alone; a supplier's price change, invalidated on the base table, reaches that supplier's prices
 * in every shop; invalidated in one shop's namespace, it reaches that shop's only.
 *
 * Run:  npx tsx examples/namespaces.ts
 *
 * Look for: the same sku in two shops is two rows (two loads, two prices); clearing one shop costs
 * one reload of its prices and none of the other's; a supplier change costs one reload per shop
 * that sells the supplier's products; every count is the one table's.
 */
import { createTable, memoryL2 } from 'echostore'

interface Price {
  shop: string
  sku: string
  cents: number
}

const suppliers: Record<string, string> = { 'drill-18v': 'makita', 'saw-blade': 'bosch', ladder: 'werner' }
/** The pricing database: each shop's list, changed by the script as the story goes. */
const lists: Record<string, number> = { north: 100, south: 120 }
const loads: string[] = []

const l2 = memoryL2()
const prices = createTable<Price>({ name: 'prices', ttl: 60_000, l2 })
const shop = (name: string) => prices.namespace(name)
const loader =
  (name: string) =>
  (sku: string, { setTags }: { setTags(tags: string[]): void }) => {
    loads.push(`${name}/${sku}`)
    setTags([`supplier:${suppliers[sku]}`])
    return { shop: name, sku, cents: lists[name]! * sku.length }
  }
const readShop = (name: string) => Promise.all(Object.keys(suppliers).map((sku) => shop(name).fetch(sku, loader(name))))
const price = (p: Price) => `${p.sku} ${(p.cents / 100).toFixed(2)}`

console.log(`north: ${(await readShop('north')).map(price).join(', ')}`)
console.log(`south: ${(await readShop('south')).map(price).join(', ')}`)
console.log(`loads so far: ${loads.length} (the same skus in two shops are two rows)`)

// The north shop gets a new price list: its namespace is cleared, in O(1), the south keeps its rows.
lists.north = 90
await shop('north').clear()
const before = loads.length
await readShop('north')
await readShop('south')
console.log(`north cleared: ${loads.length - before} reloads (${loads.slice(before).join(', ')})`)

// Makita changes its prices: invalidated on the base table, it reaches every shop's makita rows.
const beforeSupplier = loads.length
await prices.invalidateTags(['supplier:makita'])
await readShop('north')
await readShop('south')
console.log(`supplier:makita invalidated for every shop: ${loads.length - beforeSupplier} reloads (${loads.slice(beforeSupplier).join(', ')})`)

// Only the south shop re-prices Bosch: invalidated in its namespace, the north keeps its row.
const beforeScoped = loads.length
await shop('south').invalidateTags(['supplier:bosch'])
await readShop('north')
await readShop('south')
console.log(`supplier:bosch invalidated for the south only: ${loads.length - beforeScoped} reload (${loads.slice(beforeScoped).join(', ')})`)

const stats = prices.stats()
console.log(
  `one table for both shops: size ${stats.size}, loads ${stats.loads}, hits ${stats.hits}, tag_invalidations ${stats.tag_invalidations}, tag_stale ${stats.tag_stale} (each stale L1 row and its L2 entry count once each: ${loads.length - before} reloads, each found stale in both layers)`,
)
const result = { loads: loads.length, size: stats.size, tagInvalidations: stats.tag_invalidations, sameAsShop: shop('north').stats().loads === stats.loads }
await prices.close()
await l2.close()
console.log(`RESULT ${JSON.stringify(result)}`)
