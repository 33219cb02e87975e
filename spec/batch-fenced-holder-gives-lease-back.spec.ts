/**
 * A batch that holds its ids' leases gives back the lease of an id that a change fences (a clear, an
 * invalidation of a tag it named for the id, an invalidate, heard from another instance): a read of
 * that id started after the change, in another process, loads at once instead of waiting for the
 * fenced load.
 */
import { expect, it } from 'vitest'
import { type Id, createTable, localBus, memoryL2 } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { latchedBatchLoader, latchedLoader, outcome, settle } from './support/latch.js'

const quiet = async () => {
  for (let i = 0; i < 10; i++) await settle()
}

for (const change of ['clear', 'invalidateTags', 'invalidate'] as const) {
  it(`a batch lease holder fenced by ${change}: a new read elsewhere loads at once`, async () => {
    const clock = manualClock(Date.UTC(2026, 0, 1))
    const l2 = memoryL2({ clock })
    const bus = localBus()
    const lease = { ttl: 5_000, wait: 10_000 }
    const [a, w, c] = [0, 1, 2].map(() => createTable<string, Id>({ name: 't', clock, l2, bus, lease }))
    const batch = latchedBatchLoader<string>()
    const fromA = outcome(a!.fetchMany(['k', 'j'], batch.loader))
    await quiet()
    batch.only().context.setTags('k', ['g'])
    if (change === 'clear') await w!.clear()
    else if (change === 'invalidateTags') await w!.invalidateTags(['g'])
    else await w!.invalidate('k')
    await quiet()
    const lc = latchedLoader<string>()
    const fromC = outcome(c!.fetch('k', lc.loader))
    await quiet()
    const calledAtOnce = lc.calls.length
    batch.only().resolve(['old', 'J'])
    await quiet()
    for (const call of lc.calls) call.resolve('fresh')
    await quiet()
    expect(fromA.value).toEqual(['old', 'J'])
    expect(fromC.value).toBe('fresh')
    expect(calledAtOnce).toBe(1)
    await Promise.all([a!.close(), w!.close(), c!.close()])
  })
}
