/**
 * A lease holder that a change fences (a clear, a namespace's clear, an invalidation of a tag of its
 * row, heard from another instance) gives its lease back at once and says so: its answer will fill nothing, so a read
 * started after the change, in any process, loads at once rather than wait for that load and then
 * load again.
 */ import { expect, it } from 'vitest'
import { type Table, createTable, localBus, memoryL2 } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { latchedLoader, outcome, settle } from './support/latch.js'

const quiet = async () => {
  for (let i = 0; i < 10; i++) await settle()
}

for (const change of ['clear', 'namespace clear', 'invalidateTags'] as const) {
  it(`after ${change}, a new read does not wait for the fenced holder’s load`, async () => {
    const clock = manualClock(Date.UTC(2026, 0, 1))
    const l2 = memoryL2({ clock })
    const bus = localBus()
    const lease = { ttl: 5_000, wait: 10_000 }
    // A namespace's clear fences the flights of that namespace: every read goes through it then.
    const [a, w, c] = [0, 1, 2].map(() => createTable<string>({ name: 't', clock, l2, bus, lease }))
    const read = (table: Table<string>) => (change === 'namespace clear' ? table.namespace('acme') : table)
    const la = latchedLoader<string>()
    const lc = latchedLoader<string>()
    const fromA = outcome(read(a!).fetch('k', (id, ctx) => (ctx.setTags(['g']), la.loader(id, ctx)))) // A holds the lease
    await quiet()
    if (change === 'clear') await w!.clear()
    else if (change === 'namespace clear') await w!.namespace('acme').clear()
    else await w!.invalidateTags(['g'])
    await quiet() // A's flight is fenced: its answer will fill nothing
    const fromC = outcome(read(c!).fetch('k', lc.loader))
    await quiet()
    const calledAtOnce = lc.calls.length
    la.only().resolve('old')
    await quiet()
    for (const call of lc.calls) call.resolve('fresh')
    await quiet()
    expect(fromA.value).toBe('old')
    expect(fromC.value).toBe('fresh')
    expect(calledAtOnce).toBe(1)
    expect(a!.stats()).toMatchObject({ fenced: 1, lease_acquired: 1 })
    await Promise.all([a!.close(), w!.close(), c!.close()])
  })
}
