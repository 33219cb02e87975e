import { describe, expect, it } from 'vitest'
import { parseResult, runExample } from './support/run-example.js'

interface Calls {
  products: number
  categories: number
  stock: number
}

describe('examples/graphql.ts', () => {
  it('a request costs one origin call per table, a second none, and an update through another instance is in the next answer', async () => {
    const run = await runExample('graphql.ts')
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toContain('first request: 6 products; origin calls {"products":1,"categories":1,"stock":1}')
    const result = parseResult<{ first: Calls; second: Calls; third: Calls; updated: number; categories: string[] }>(run.stdout)
    expect(result).toEqual({
      first: { products: 1, categories: 1, stock: 1 },
      second: { products: 0, categories: 0, stock: 0 },
      third: { products: 0, categories: 0, stock: 0 },
      updated: 28,
      categories: ['garden', 'kitchen', 'tools', 'garden', 'kitchen', 'tools'],
    })
  })
})
