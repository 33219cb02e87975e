/** How big a W9 trace is: the requests, the key space they draw from, and the capacity every contender gets. */
export interface TraceShape {
  /** Requests in the trace. */
  requests: number
  /** Ids are integers in [0, keySpace). */
  keySpace: number
  /** Most rows each contender may hold: 1 % of the key space. */
  capacity: number
}

/** One W9 trace: the ids requested, in order, and how they were made. */
export interface Trace {
  /** Short name used in tables, metrics and the plot. */
  name: string
  /** What the trace stands for, in a few words. */
  title: string
  /** Ids in [0, keySpace), in request order. */
  ids: Uint32Array
  /** How the trace was generated, with the numbers used, for the report's method text. */
  recipe: string
}

/** The requests and ids of a full-size trace; BENCH_SCALE multiplies both, so their ratio holds. */
const FULL_SIZE = 1_000_000

/** The W9 shape at `scale`: 1M requests over 1M ids, capacity 1 % of the ids; never below 10,000 requests (capacity 100). */
export function traceShape(scale: number): TraceShape {
  const n = Math.max(10_000, Math.round(FULL_SIZE * scale))
  return { requests: n, keySpace: n, capacity: Math.round(n / 100) }
}
