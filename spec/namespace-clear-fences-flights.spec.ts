/**
 * A namespace's clear() fences the namespace's flights in progress, here and in every process on the
 * bus (their waiters get the answer, stored in neither layer), and only those: a flight of the same
 * id in the base table or another namespace still fills. (A lease holder it fences gives the lease
 * back at once: see fenced-holder-gives-lease-back.spec.ts.)
 */
import { describe, expect, it } from 'vitest'
import { type Id, createTable, localBus, memoryL2 } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { latchedLoader, settle } from './support/latch.js'

const quiet = async () => {
  for (let i = 0; i < 10; i++) await settle()
}

describe("a namespace's clear() with flights in progress", () => {
  it("fences the namespace's flight, here and in another process on the bus; the base table's and another namespace's flights of the same id fill", async () => {
    const clock = manualClock(0)
    const l2 = memoryL2({ clock })
    const bus = localBus()
    const options = { name: 'ns', ttl: 60_000, jitter: 0, sweepInterval: 1e9, clock, l2, bus }
    const [here, there] = [createTable<string, Id>(options), createTable<string, Id>(options)]
    const loads = { acme: latchedLoader<string>(), acmeThere: latchedLoader<string>(), base: latchedLoader<string>(), other: latchedLoader<string>() }
    const reads = {
      acme: here.namespace('acme').fetch('k', loads.acme.loader),
      acmeThere: there.namespace('acme').fetch('k', loads.acmeThere.loader),
      base: here.fetch('k', loads.base.loader),
      other: here.namespace('other').fetch('k', loads.other.loader),
    }
    await quiet()
    expect((await here.namespace('acme').clear()).l2).toBe('cleared')
    await quiet()
    loads.acme.only().resolve('acme old')
    loads.acmeThere.only().resolve('acme old there')
    loads.base.only().resolve('base')
    loads.other.only().resolve('other')
    expect(await reads.acme).toBe('acme old')
    expect(await reads.acmeThere).toBe('acme old there')
    expect(await reads.base).toBe('base')
    expect(await reads.other).toBe('other')
    await quiet()
    expect(here.namespace('acme').has('k')).toBe(false)
    expect(there.namespace('acme').has('k')).toBe(false)
    expect(here.peek('k')).toBe('base')
    expect(here.namespace('other').peek('k')).toBe('other')
    const cold = createTable<string, Id>(options)
    expect(await cold.namespace('acme').fetch('k', () => 'acme new')).toBe('acme new')
    expect(await cold.fetch('k', () => 'never')).toBe('base')
    expect(await cold.namespace('other').fetch('k', () => 'never')).toBe('other')
    await Promise.all([here.close(), there.close(), cold.close(), l2.close(), bus.close()])
  })
})
