/**
 * The base table's clear() and invalidateTags reach every namespace, nested ones included: a
 * namespace's flight in progress, here or in another process on the bus, is fenced (its waiters get
 * the answer, stored in neither layer), and a cold process loads afresh.
 */
import { expect, it } from 'vitest'
import { type Id, type LoaderContext, createTable, localBus, memoryL2 } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { latchedLoader, settle } from './support/latch.js'

for (const change of ['clear', 'invalidateTags'] as const) {
  it(`base ${change} fences a namespace flight, here and on the bus`, async () => {
    const clock = manualClock(0)
    const l2 = memoryL2({ clock })
    const bus = localBus()
    const options = { name: 'ns', ttl: 60_000, jitter: 0, sweepInterval: 1e9, clock, l2, bus }
    const [here, there] = [createTable<string, Id>(options), createTable<string, Id>(options)]
    const a = latchedLoader<string>()
    const b = latchedLoader<string>()
    const tagging = (l: typeof a) => (id: Id, ctx: LoaderContext) => (ctx.setTags(['t']), l.loader(id, ctx))
    const r1 = here.namespace('acme').fetch('k', tagging(a))
    const r2 = there.namespace('acme').namespace('deep').fetch('k', tagging(b))
    await settle()
    if (change === 'clear') await here.clear()
    else await here.invalidateTags(['t'])
    await settle()
    a.only().resolve('old')
    b.only().resolve('old2')
    expect(await r1).toBe('old')
    expect(await r2).toBe('old2')
    await settle()
    expect(here.namespace('acme').has('k')).toBe(false)
    expect(there.namespace('acme').namespace('deep').has('k')).toBe(false)
    const cold = createTable<string, Id>(options)
    expect(await cold.namespace('acme').fetch('k', () => 'new')).toBe('new')
    expect(
      await cold
        .namespace('acme')
        .namespace('deep')
        .fetch('k', () => 'new'),
    ).toBe('new')
    await Promise.all([here.close(), there.close(), cold.close()])
  })
}
