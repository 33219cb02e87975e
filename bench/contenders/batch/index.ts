import type { PageContender } from './types.js'

/** A W11 contender, loaded lazily, and whether it is EchoStore (skipped with BENCH_SKIP=echostore). */
interface Entry {
  subject: boolean
  load: () => Promise<PageContender>
}

/** W11's contenders in table order: EchoStore's two batched reads (`getMany`, and `get` per id), its N+1 read, the floor of a read per id, then the peers. */
const ENTRIES: readonly Entry[] = [
  { subject: true, load: async () => (await import('./echostore-get-many.js')).echostoreGetMany },
  { subject: true, load: async () => (await import('./echostore-get.js')).echostoreGet },
  { subject: true, load: async () => (await import('./echostore-fetch.js')).echostoreFetch },
  { subject: false, load: async () => (await import('./floor-promise-per-id.js')).perIdFloor },
  { subject: false, load: async () => (await import('./dataloader.js')).dataloaderLru },
  { subject: false, load: async () => (await import('./cachified-batch.js')).cachifiedBatch },
]

/** Loads W11's contenders; EchoStore's only when `withEchoStore` (the run did not skip it), so W11 runs while src/ cannot be loaded. */
export async function pageContenders(withEchoStore: boolean): Promise<PageContender[]> {
  const out: PageContender[] = []
  for (const entry of ENTRIES) if (withEchoStore || !entry.subject) out.push(await entry.load())
  return out
}
