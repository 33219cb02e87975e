/**
 * A load in one process racing a tag invalidation in another is judged by the two clocks, as versions
 * are: a row loaded in a process whose clock runs ahead of the invalidating one's by more than the
 * time between the load and the invalidation is not hidden by it, and lives out its `ttl`; one whose
 * clock runs ahead by less is hidden.
 */
import { describe, expect, it } from 'vitest'
import { createTable, localBus } from '../src/index.js'
import { manualClock } from '../src/testing.js'

const TTL = 60_000

/** A loader process whose clock reads `ahead` ms more than the invalidating one's; the load happens, then `between` ms later the invalidation. */
async function race(ahead: number, between: number) {
  const bus = localBus()
  const [loaderClock, invalidatorClock] = [manualClock(1_000 + ahead), manualClock(1_000)]
  const options = { name: 'tagged', ttl: TTL, jitter: 0, sweepInterval: 1e9, bus }
  const loading = createTable<string>({ ...options, clock: loaderClock })
  const invalidating = createTable<string>({ ...options, clock: invalidatorClock })
  expect(await loading.fetch('a', (_id, { setTags }) => (setTags(['t']), 'loaded'))).toBe('loaded')
  loaderClock.advance(between)
  invalidatorClock.advance(between)
  await invalidating.invalidateTags(['t'])
  expect(loading.stats().coh_applied).toBe(1)
  return { loading, loaderClock, close: () => Promise.all([loading.close(), invalidating.close()]).then(() => bus.close()) }
}

describe('a tag invalidation heard from a process with another clock', () => {
  it('hides a row loaded before it when the loader’s clock runs ahead by less than the time between them', async () => {
    const { loading, close } = await race(5, 10)
    expect(loading.peek('a')).toBeUndefined()
    expect(await loading.fetch('a', () => 'reloaded')).toBe('reloaded')
    await close()
  })

  it('does not hide it when the loader’s clock runs ahead by more: the row lives out its ttl', async () => {
    const { loading, loaderClock, close } = await race(50, 10)
    expect(loading.peek('a')).toBe('loaded')
    loaderClock.advance(TTL - 10 - 1)
    expect(await loading.fetch('a', () => 'never')).toBe('loaded')
    loaderClock.advance(1)
    expect(loading.has('a')).toBe(false)
    await close()
  })
})
