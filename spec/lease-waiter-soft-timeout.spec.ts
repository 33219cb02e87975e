/**
 * A soft timeout answers a flight that waits on another process's lease as it answers a flight that
 * loads: its callers get the graced value (its row's, or in a cold process the entry L2 holds) once
 * it passes, the flight goes on waiting, and the holder's fill is the next answer, with no load of
 * its own.
 */
import { expect, it } from 'vitest'
import { type Id, createTable, localBus, memoryL2 } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { latchedLoader, outcome, settle } from './support/latch.js'

async function quiet() {
  for (let i = 0; i < 8; i++) await settle()
}

for (const where of ['table', 'fetch'] as const) {
  it(`a lease waiter with a graced row answers it at its soft timeout (${where}); the holder's fill lands later`, async () => {
    const clock = manualClock(0)
    const store = memoryL2({ clock })
    const bus = localBus()
    const base = { name: 'l', ttl: 1_000, jitter: 0, grace: 10_000, sweepInterval: 1e9, loadTimeout: 5_000, clock, l2: store, bus, lease: { ttl: 3_000, wait: 4_000 } }
    const a = createTable<string, Id>(base)
    const b = createTable<string, Id>(where === 'table' ? { ...base, softTimeout: 100 } : base)
    await a.fetch('k', () => 'old')
    await b.fetch('k', () => 'never')
    clock.advance(1_001)
    await quiet()
    const holder = latchedLoader<string>()
    const fromA = outcome(a.fetch('k', holder.loader))
    await quiet()
    const own = latchedLoader<string>()
    const fromB = outcome(b.fetch('k', own.loader, where === 'fetch' ? { softTimeout: 100 } : {}))
    await quiet()
    clock.advance(100)
    await quiet()
    expect(fromB).toMatchObject({ state: 'fulfilled', value: 'old' })
    expect(own.calls).toHaveLength(0)
    holder.only().resolve('new')
    await quiet()
    expect(fromA.value).toBe('new')
    expect(await b.fetch('k', () => 'never')).toBe('new')
    await Promise.all([a.close(), b.close()])
    await store.close()
    await bus.close()
  })
}

it('a cold lease waiter with a graced entry in L2 answers it at its soft timeout', async () => {
  const clock = manualClock(0)
  const store = memoryL2({ clock })
  const bus = localBus()
  const base = { name: 'l', ttl: 1_000, jitter: 0, grace: 10_000, sweepInterval: 1e9, loadTimeout: 5_000, clock, l2: store, bus, lease: { ttl: 3_000, wait: 4_000 } }
  const a = createTable<string, Id>(base)
  await a.fetch('k', () => 'old')
  clock.advance(1_001)
  await quiet()
  const holder = latchedLoader<string>()
  const fromA = outcome(a.fetch('k', holder.loader))
  await quiet()
  const b = createTable<string, Id>({ ...base, softTimeout: 100 })
  const own = latchedLoader<string>()
  const fromB = outcome(b.fetch('k', own.loader))
  await quiet()
  clock.advance(100)
  await quiet()
  expect(fromB).toMatchObject({ state: 'fulfilled', value: 'old' })
  holder.only().resolve('new')
  await quiet()
  expect(fromA.value).toBe('new')
  expect(await b.fetch('k', () => 'never')).toBe('new')
  expect(own.calls).toHaveLength(0)
  await Promise.all([a.close(), b.close()])
  await store.close()
  await bus.close()
})
