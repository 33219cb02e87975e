import type { Row } from '../types.js'

/**
 * W11's contenders: readers of pages of ids, each in front of one bulk origin. A reader is built
 * from the origin, a ttl and a capacity, reads a page with `read`, and is closed with `close`.
 */

/** How W11 asks for a reader. */
export interface PageReaderOptions {
  /** Row lifetime in ms. */
  ttl: number
  /** Most rows held (W11 sets it above the id space: no row is evicted). */
  capacity: number
  /** The bulk origin: one call for many ids, one row per id in their order. */
  origin: (ids: readonly string[]) => Promise<Row[]>
}

/** One reader built by a contender. */
export interface PageReader {
  /** The rows of a page's ids, in their order: cached rows, the misses from the origin. */
  read(ids: readonly string[]): Promise<ReadonlyArray<Row | undefined>>
  /** Releases timers and stores. */
  close(): Promise<void>
}

/** A W11 contender: a name, what it is, the package versioned in the report, and a factory. */
export interface PageContender {
  /** Short name used in W11's tables and progress lines. */
  name: string
  /** `subject`: EchoStore; `peer`: a published library; `floor`: the least a kind of reader costs, written here. */
  kind: 'subject' | 'peer' | 'floor'
  /** npm packages whose versions are reported. */
  pkgs: readonly string[]
  /** How the adapter configures the library, for the report. */
  setup: string
  /** Builds one reader. */
  create(options: PageReaderOptions): PageReader
}
