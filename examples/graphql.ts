/**
 * A GraphQL server whose resolvers read through tables, the way DataLoader is used: a shop's
 * `products` query lists products, and each product resolves its category (its parent) and its
 * stock. Every resolver reads one id (`table.get(id)`), and the reads that miss in one turn go to
 * each table's batch loader as one call: one origin call per table per request, with no loader
 * object made per request. Executed by `graphql` (graphql-js), as a server would.
 *
 * Run:  npx tsx examples/graphql.ts
 *
 * Look for: the first request costs one origin call per table (products, categories, stock); the
 * second costs none (every read is a hit); a stock update made through another instance (its own
 * tables, sharing an L2 and a bus with these) is in the next request's answer, at no origin call.
 */
import { GraphQLInt, GraphQLList, GraphQLNonNull, GraphQLObjectType, GraphQLSchema, GraphQLString, graphql } from 'graphql'
import { type BatchLoader, createTable, localBus, memoryL2 } from 'echostore'

interface Product {
  id: number
  name: string
  categoryId: number
}
interface Category {
  id: number
  name: string
}
interface Stock {
  productId: number
  available: number
}

/** The shop's database: each table answers `WHERE id IN (...)` in one query; every query is recorded by table. */
const queries: Record<'products' | 'categories' | 'stock', number[][]> = { products: [], categories: [], stock: [] }
const availability = new Map<number, number>(Array.from({ length: 8 }, (_, i) => [i + 1, 10 * (i + 1)]))
function query<V>(table: keyof typeof queries, row: (id: number) => V): BatchLoader<V, number> {
  return async (ids) => {
    queries[table].push(ids)
    await new Promise((resolve) => setTimeout(resolve, 2)) // one round trip to the database
    return ids.map(row)
  }
}
const productRow = (id: number): Product => ({ id, name: `product ${id}`, categoryId: 100 + (id % 3) })
const categoryRow = (id: number): Category => ({ id, name: ['tools', 'garden', 'kitchen'][id - 100]! })
const stockRow = (productId: number): Stock => ({ productId, available: availability.get(productId) ?? 0 })

/** One instance of the service: its tables, sharing the L2 and the bus with the other instances. */
function instance(l2: ReturnType<typeof memoryL2>, bus: ReturnType<typeof localBus>) {
  return {
    products: createTable<Product, number>({ name: 'products', ttl: 60_000, l2, bus, batchLoader: query('products', productRow) }),
    categories: createTable<Category, number>({ name: 'categories', ttl: 60_000, l2, bus, batchLoader: query('categories', categoryRow) }),
    stock: createTable<Stock, number>({ name: 'stock', ttl: 5_000, l2, bus, batchLoader: query('stock', stockRow) }),
  }
}
type Tables = ReturnType<typeof instance>

/** The schema: resolvers read through the tables of the request's instance (its context), one id at a time. */
const CategoryType = new GraphQLObjectType<Category, Tables>({
  name: 'Category',
  fields: { id: { type: new GraphQLNonNull(GraphQLInt) }, name: { type: new GraphQLNonNull(GraphQLString) } },
})
const StockType = new GraphQLObjectType<Stock, Tables>({
  name: 'Stock',
  fields: { available: { type: new GraphQLNonNull(GraphQLInt) } },
})
const ProductType = new GraphQLObjectType<Product, Tables>({
  name: 'Product',
  fields: {
    id: { type: new GraphQLNonNull(GraphQLInt) },
    name: { type: new GraphQLNonNull(GraphQLString) },
    category: { type: new GraphQLNonNull(CategoryType), resolve: (product, _, { categories }) => categories.get(product.categoryId) },
    stock: { type: new GraphQLNonNull(StockType), resolve: (product, _, { stock }) => stock.get(product.id) },
  },
})
const schema = new GraphQLSchema({
  query: new GraphQLObjectType<unknown, Tables>({
    name: 'Query',
    fields: {
      products: {
        type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(ProductType))),
        args: { ids: { type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(GraphQLInt))) } },
        resolve: (_, { ids }: { ids: number[] }, { products }) => ids.map((id) => products.get(id)),
      },
    },
  }),
})

const SOURCE = '{ products(ids: [1, 2, 3, 4, 5, 6]) { id name category { name } stock { available } } }'
const l2 = memoryL2()
const bus = localBus()
const [here, there] = [instance(l2, bus), instance(l2, bus)]

/** Serves one request on `tables`; returns its data and the origin calls it cost, by table. */
async function request(tables: Tables) {
  const before = Object.fromEntries(Object.entries(queries).map(([table, list]) => [table, list.length]))
  const result = await graphql({ schema, source: SOURCE, contextValue: tables })
  if (result.errors !== undefined) throw new Error(result.errors.map((error) => error.message).join('; '))
  const calls = Object.fromEntries(Object.entries(queries).map(([table, list]) => [table, list.length - before[table]!]))
  return { data: result.data as { products: { id: number; name: string; category: { name: string }; stock: { available: number } }[] }, calls }
}

const first = await request(here)
console.log(`first request: ${first.data.products.length} products; origin calls ${JSON.stringify(first.calls)}`)
const second = await request(here)
console.log(`second request: origin calls ${JSON.stringify(second.calls)}`)

// Another instance sells two drills: it writes the new stock through its own table (L2, then the bus).
availability.set(3, 28)
await there.stock.put(3, { productId: 3, available: 28 })
const third = await request(here)
const drill = third.data.products.find((product) => product.id === 3)!
console.log(`after an update through the other instance: product 3 has ${drill.stock.available} available; origin calls ${JSON.stringify(third.calls)}`)

const result = { first: first.calls, second: second.calls, third: third.calls, updated: drill.stock.available, categories: first.data.products.map((p) => p.category.name) }
await Promise.all([...Object.values(here), ...Object.values(there)].map((table) => table.close()))
await Promise.all([l2.close(), bus.close()])
console.log(`RESULT ${JSON.stringify(result)}`)
