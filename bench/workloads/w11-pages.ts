import { zipfSampler } from '../lib/random.js'

/** The shape of W11's pages: how many, how many ids each, drawn from how many ids, with which Zipf exponent. */
export interface PageShape {
  pages: number
  pageSize: number
  keySpace: number
  s: number
}

/**
 * `shape.pages` pages of `shape.pageSize` distinct ids each (a page lists different products), drawn
 * from Zipf(s) over `shape.keySpace` ids with a seeded PRNG: a draw that repeats an id already on
 * the page is drawn again. The same seed gives the same pages, so every contender reads one trace.
 */
export function pageTrace(ids: readonly string[], shape: PageShape, seed: number): string[][] {
  if (shape.pageSize > shape.keySpace || ids.length < shape.keySpace)
    throw new RangeError(`pageTrace: pages of ${shape.pageSize} distinct ids need ${shape.keySpace} ≥ ${shape.pageSize} ids, and ${ids.length} were given`)
  const draw = zipfSampler(shape.keySpace, shape.s, seed)
  const onPage = new Uint8Array(shape.keySpace)
  const pages = new Array<string[]>(shape.pages)
  for (let p = 0; p < shape.pages; p++) {
    const ranks: number[] = []
    while (ranks.length < shape.pageSize) {
      const rank = draw()
      if (onPage[rank] === 1) continue
      onPage[rank] = 1
      ranks.push(rank)
    }
    for (const rank of ranks) onPage[rank] = 0
    pages[p] = ranks.map((rank) => ids[rank]!)
  }
  return pages
}
