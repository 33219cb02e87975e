import type { DayContender } from './types.js'

/** W12's adapters, by the bench contender they stand for, loaded only when W12 runs. The one-instance shape runs the first of each list; the four-instance shape all of them. */
export async function dayContenders(name: string): Promise<DayContender[]> {
  switch (name) {
    case 'echostore': {
      const m = await import('./echostore.js')
      return [m.echostoreDayLease, m.echostoreDayNoLease, m.echostoreDayLeaseNodeRedis, m.echostoreDayNoLeaseNodeRedis]
    }
    case 'bentocache':
      return [(await import('./bentocache.js')).bentocacheDay]
    case 'lru-cache':
      return [(await import('./lru-cache.js')).lruCacheDay]
    case 'async-cache-dedupe':
      return [(await import('./async-cache-dedupe.js')).asyncCacheDedupeDay]
    case 'cache-manager':
      return [(await import('./cache-manager.js')).cacheManagerDay]
    case 'cachified':
      return [(await import('./cachified.js')).cachifiedDay]
    case 'floor:map':
      return [(await import('./cache-aside-floor.js')).cacheAsideFloorDay]
    default:
      return []
  }
}
