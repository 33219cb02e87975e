import { describe, expect, it } from 'vitest'
import { makeIds } from '../bench/lib/random.js'
import { pageTrace } from '../bench/workloads/w11-pages.js'

const ids = makeIds('item-', 5_000)
const shape = { pages: 300, pageSize: 100, keySpace: 5_000, s: 1 }

describe('W11 page trace', () => {
  it('gives every page its size in distinct ids of the id space', () => {
    const pages = pageTrace(ids, shape, 7)
    expect(pages).toHaveLength(300)
    const known = new Set(ids)
    for (const page of pages) {
      expect(new Set(page).size).toBe(100)
      expect(page.every((id) => known.has(id))).toBe(true)
    }
  })

  it('is the same trace for the same seed, and another for another seed', () => {
    expect(pageTrace(ids, shape, 7)).toEqual(pageTrace(ids, shape, 7))
    expect(pageTrace(ids, shape, 8)).not.toEqual(pageTrace(ids, shape, 7))
  })

  it('draws by Zipf: the top rank is on nearly every page, a tail rank on few', () => {
    const pages = pageTrace(ids, shape, 7)
    const share = (id: string) => pages.filter((page) => page.includes(id)).length / pages.length
    expect(share('item-0')).toBeGreaterThan(0.99)
    expect(share('item-4999')).toBeLessThan(0.05)
  })

  it('refuses pages larger than the id space', () => {
    expect(() => pageTrace(ids.slice(0, 50), { ...shape, keySpace: 50 }, 7)).toThrow(RangeError)
  })
})
