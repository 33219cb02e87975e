/**
 * Environments are told apart by their L2's key space, not only by the bus's namespace: every
 * message carries the publisher's, and a table ignores another's (`coh_foreign`). A table without an
 * L2 sends none, and its messages are applied as before; a table without one applies every message.
 */
import { describe, expect, it } from 'vitest'
import { createTable, localBus, memoryL2 } from '../src/index.js'
import type { L2Store } from '../src/store.js'
import { manualClock } from '../src/testing.js'

const inSpace = (l2: L2Store, keySpace: string): L2Store => Object.assign(Object.create(l2) as L2Store, { keySpace })

function world() {
  const clock = manualClock(0)
  const bus = localBus()
  const options = { name: 'users', jitter: 0, sweepInterval: 1e9, clock, bus }
  const prod = createTable<string>({ ...options, l2: inSpace(memoryL2({ clock }), 'prod:') })
  const staging = createTable<string>({ ...options, l2: inSpace(memoryL2({ clock }), 'staging:') })
  const bare = createTable<string>(options)
  return { bus, prod, staging, bare, close: () => Promise.all([prod.close(), staging.close(), bare.close()]).then(() => bus.close()) }
}

describe('a change heard on a bus shared by environments', () => {
  it("from another key space is ignored (coh_foreign): staging's invalidate and clear leave prod's rows", async () => {
    const { prod, staging, close } = world()
    await prod.fetch('a', () => 'prod a')
    await staging.invalidate('a')
    await staging.clear()
    expect(prod.peek('a')).toBe('prod a')
    expect(prod.stats()).toMatchObject({ coh_foreign: 2, coh_applied: 0, clears: 0 })
    await close()
  })

  it('from a table without an L2 (no key space) is applied', async () => {
    const { prod, bare, close } = world()
    await prod.fetch('a', () => 'prod a')
    await bare.invalidate('a')
    expect(prod.has('a')).toBe(false)
    expect(prod.stats()).toMatchObject({ coh_foreign: 0, coh_applied: 1 })
    await close()
  })

  it('by a table without an L2 is applied whatever key space it came from', async () => {
    const { prod, bare, close } = world()
    await bare.fetch('a', () => 'bare a')
    await prod.invalidate('a')
    expect(bare.has('a')).toBe(false)
    expect(bare.stats()).toMatchObject({ coh_foreign: 0, coh_applied: 1 })
    await close()
  })

  it('from the same key space is applied', async () => {
    const clock = manualClock(0)
    const bus = localBus()
    const store = memoryL2({ clock })
    const options = { name: 'users', jitter: 0, sweepInterval: 1e9, clock, bus }
    const [one, two] = [createTable<string>({ ...options, l2: inSpace(store, 'prod:') }), createTable<string>({ ...options, l2: inSpace(store, 'prod:') })]
    await two.fetch('a', () => 'a')
    await one.invalidate('a')
    expect(two.has('a')).toBe(false)
    expect(two.stats()).toMatchObject({ coh_foreign: 0, coh_applied: 1 })
    await Promise.all([one.close(), two.close()])
    await bus.close()
  })
})
