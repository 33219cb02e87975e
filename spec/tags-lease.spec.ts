/**
 * Tags with `lease`: a flight with a lease reads L2 and takes the lease in one step, and a tagged
 * entry older than one of its tags is no fill there either: the flight takes the lease and loads.
 */
import { describe, expect, it } from 'vitest'
import { createTable, localBus, memoryL2 } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { settle } from './support/latch.js'
import { failingTagInvalidations } from './support/failing-tag-invalidations.js'

describe('a tagged L2 entry older than its tag, read by a flight with a lease', () => {
  it('is no fill: the flight takes the lease, loads once and answers the new value; tag_stale counts the entry', async () => {
    const clock = manualClock(1_000)
    const l2 = memoryL2({ clock })
    const writer = createTable<string>({ name: 'stock', clock, l2, lease: true })
    const reader = createTable<string>({ name: 'stock', clock, l2, lease: true })
    let origin = 'before'
    const load = (_: string, { setTags }: { setTags(tags: string[]): void }) => {
      setTags(['depot:7'])
      return origin
    }
    expect(await writer.fetch('sku', load)).toBe('before')
    origin = 'after'
    await writer.invalidateTags(['depot:7'])
    expect(await reader.fetch('sku', load)).toBe('after')
    expect(reader.stats()).toMatchObject({ loads: 1, l2_hits: 0, tag_stale: 1, lease_acquired: 1, lease_waited: 0 })
    // Its fill is in L2, born after the invalidation: the writer's next read takes it from there.
    expect(await writer.fetch('sku', () => 'not asked')).toBe('after')
    expect(writer.stats()).toMatchObject({ loads: 1, l2_hits: 1 })
    await Promise.all([writer.close(), reader.close()])
    await l2.close()
  })

  it('is no fill when the invalidation did not reach L2 but this process knows of it: the flight loads and its fill replaces the entry', async () => {
    const clock = manualClock(1_000)
    const l2 = failingTagInvalidations(memoryL2({ clock }))
    const bus = localBus()
    const writer = createTable<string>({ name: 'stock', clock, l2, bus, lease: true })
    const reader = createTable<string>({ name: 'stock', clock, l2, bus, lease: true })
    let origin = 'before'
    const load = (_: string, { setTags }: { setTags(tags: string[]): void }) => {
      setTags(['depot:7'])
      return origin
    }
    expect(await writer.fetch('sku', load)).toBe('before')
    origin = 'after'
    expect(await writer.invalidateTags(['depot:7'])).toMatchObject({ l2: 'failed' })
    await settle()
    expect(await reader.fetch('sku', load)).toBe('after')
    expect(reader.stats()).toMatchObject({ loads: 1, l2_hits: 0, tag_stale: 1, lease_acquired: 1 })
    expect(await writer.fetch('sku', () => 'not asked')).toBe('after')
    await Promise.all([writer.close(), reader.close()])
    await l2.close()
  })
})
