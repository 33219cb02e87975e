import { describe, expect, it } from 'vitest'
import { manualClock } from '../src/core/clock.js'
import { memoryL2 } from '../src/l2/memory.js'
import { l2ContractSuite } from './l2-contract.js'

describe('memoryL2: the L2Store contract', () => {
  l2ContractSuite(() => {
    const clock = manualClock(1_000)
    const store = memoryL2({ clock })
    // One process holds a memoryL2: its "peer" is itself, minus the closing.
    const peer = () => ({ ...store, close: async () => {} })
    return {
      store,
      expire: async (_table, _id, ttl) => clock.advance(ttl),
      age: async (_table, _id, ms) => clock.advance(ms),
      peer,
      expireLease: async (_table, _id, ttl) => clock.advance(ttl),
    }
  })
})

describe('memoryL2', () => {
  it('counts the remaining ttl down on its clock, and expires exactly at the written ttl', async () => {
    const clock = manualClock(0)
    const store = memoryL2({ clock })
    await store.set('t', 'a', { kind: 'value', value: 'x', version: 1, ttl: 1_000 })
    clock.advance(400)
    expect((await store.get('t', 'a'))?.ttl).toBe(600)
    clock.advance(599)
    expect((await store.get('t', 'a'))?.ttl).toBe(1)
    clock.advance(1)
    expect(await store.get('t', 'a')).toBeUndefined()
  })

  it('holds values by reference, as an L1 does', async () => {
    const store = memoryL2({ clock: manualClock() })
    const held = { count: 1 }
    await store.set('t', 'ref', { kind: 'value', value: held, version: 1, ttl: 1_000 })
    held.count = 2
    const read = await store.get('t', 'ref')
    expect(read?.value).toBe(held)
    expect(read?.value).toEqual({ count: 2 })
  })

  it('drops an expired entry when a read meets it', async () => {
    const clock = manualClock()
    const store = memoryL2({ clock })
    await store.set('t', 'a', { kind: 'absent', version: 1, ttl: 10 })
    expect(store.size).toBe(1)
    clock.advance(10)
    await store.get('t', 'a')
    expect(store.size).toBe(0)
  })

  it('stays bounded when expired entries are never read again: writes sweep them', async () => {
    const clock = manualClock()
    const store = memoryL2({ clock })
    for (let round = 0; round < 20; round++) {
      for (let i = 0; i < 100; i++) await store.set('t', `${round}:${i}`, { kind: 'value', value: i, version: 1, ttl: 5 })
      clock.advance(5)
    }
    // 2 000 entries written, at most 100 alive at a time: the sweep keeps the map near twice the live set.
    expect(store.size).toBeLessThanOrEqual(200)
  })

  it('stays bounded when each write also mints a version record kept for days: the records do not put off the sweep of entries', async () => {
    const clock = manualClock()
    const store = memoryL2({ clock })
    let largest = 0
    for (let round = 0; round < 60; round++) {
      for (let i = 0; i < 100; i++) {
        const id = `${round}:${i}`
        await store.set('t', id, { kind: 'value', value: i, version: await store.nextVersion('t', id, 0), ttl: 5 })
      }
      largest = Math.max(largest, store.size)
      clock.advance(5)
    }
    // 6 000 entries and 6 000 version records written, at most 100 entries alive at a time.
    expect(largest).toBeLessThanOrEqual(200)
  })

  it('forgets a version counter VERSION_TTL_MS after its last issue, then restarts above the live entry', async () => {
    const clock = manualClock()
    const store = memoryL2({ clock })
    expect(await store.nextVersion('t', 'a', 0)).toBe(1)
    expect(await store.nextVersion('t', 'a', 0)).toBe(2)
    clock.advance(7 * 24 * 60 * 60 * 1000)
    expect(await store.nextVersion('t', 'a', 0)).toBe(1)
    await store.set('t', 'a', { kind: 'value', value: 'v', version: 40, ttl: 30 * 24 * 60 * 60 * 1000 })
    clock.advance(7 * 24 * 60 * 60 * 1000)
    expect(await store.nextVersion('t', 'a', 0)).toBe(41)
  })

  it('works on the system clock by default', async () => {
    const store = memoryL2()
    await store.set('t', 'a', { kind: 'value', value: 1, version: 1, ttl: 60_000 })
    const entry = await store.get('t', 'a')
    expect(entry?.value).toBe(1)
    expect(entry!.ttl).toBeGreaterThan(59_000)
    await store.close()
  })
})
