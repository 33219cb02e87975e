import type { Contender } from './types.js'

interface Entry {
  name: string
  load: () => Promise<Contender>
}

/**
 * Every contender, by name, loaded lazily: a contender that is skipped is never imported, so the
 * bench runs while one of them (say EchoStore's `src/index.ts`) cannot be loaded.
 */
export const registry: readonly Entry[] = [
  { name: 'floor:map', load: async () => (await import('./map-floor.js')).mapFloor },
  { name: 'floor:single-flight', load: async () => (await import('./single-flight-floor.js')).singleFlightFloor },
  { name: 'echostore', load: async () => (await import('./echostore.js')).echostore },
  { name: 'lru-cache', load: async () => (await import('./lru-cache.js')).lruCache },
  { name: 'bentocache', load: async () => (await import('./bentocache.js')).bentocache },
  { name: 'cache-manager', load: async () => (await import('./cache-manager.js')).cacheManager },
  { name: 'async-cache-dedupe', load: async () => (await import('./async-cache-dedupe.js')).asyncCacheDedupe },
  { name: 'transitory', load: async () => (await import('./transitory.js')).transitory },
  { name: 'sieve-cache', load: async () => (await import('./sieve-cache.js')).sieveCache },
  { name: 'cachified', load: async () => (await import('./cachified.js')).cachifiedContender },
]

/** Loads one contender by name; throws naming the known ones when it is not one of them. */
export async function loadContender(name: string): Promise<Contender> {
  const entry = registry.find((e) => e.name === name)
  if (entry === undefined) throw new Error(`unknown contender ${JSON.stringify(name)}; known: ${registry.map((e) => e.name).join(', ')}`)
  try {
    return await entry.load()
  } catch (error) {
    throw new Error(`cannot load contender ${name} (skip it with BENCH_SKIP=${name}): ${String(error)}`, { cause: error })
  }
}

/**
 * Loads the contenders the env selects: BENCH_ONLY (comma list; floors always stay, every figure
 * is a ratio to them) and BENCH_SKIP (comma list; may skip floors too).
 */
export async function selectContenders(only: readonly string[], skip: readonly string[]): Promise<Contender[]> {
  for (const name of [...only, ...skip]) {
    if (!registry.some((e) => e.name === name)) throw new Error(`unknown contender ${JSON.stringify(name)} in BENCH_ONLY/BENCH_SKIP; known: ${registry.map((e) => e.name).join(', ')}`)
  }
  const names = registry
    .map((e) => e.name)
    .filter((name) => only.length === 0 || only.includes(name) || name.startsWith('floor:'))
    .filter((name) => !skip.includes(name))
  const out: Contender[] = []
  for (const name of names) out.push(await loadContender(name))
  return out
}
