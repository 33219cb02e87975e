/**
 * A load that started before a change, in a process that never heard of it (a bus message lost, or
 * no bus), whose loader runs longer than the row lives: its write-back is refused by the change's
 * entry, which stands in L2 a tombstone's life past its row's expiry. No process then reads the old
 * value, the one that made the change included; past its expiry the entry answers no read, and a
 * load that reads it carries its version, so the load's own write is taken.
 */
import { describe, expect, it } from 'vitest'
import type { Bus, BusDelivery } from '../src/bus/bus.js'
import { createTable, memoryL2 } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { latchedLoader, settle } from './support/latch.js'

/** A bus that delivers to every subscriber but the `deaf` ones (by subscription order): their messages are lost. */
function lossyBus(deaf: ReadonlySet<number>): Bus {
  const handlers: ((delivery: BusDelivery) => void)[] = []
  return {
    publish: async (message) => handlers.forEach((handler, i) => deaf.has(i) || handler({ type: 'message', message: Object.freeze({ ...message }) })),
    subscribe: (handler) => (handlers.push(handler), () => {}),
    close: async () => {},
  }
}

const TTL = 1_000

describe('a load that started before a change, in a process that never heard of it, answering after the change’s row expired', () => {
  for (const change of ['put', 'invalidate'] as const) {
    for (const bus of ['a lost message', 'no bus'] as const) {
      it(`${change}, ${bus}: its old value is not written back; every process reads the new one`, async () => {
        const clock = manualClock(1_000_000)
        const l2 = memoryL2({ clock })
        const shared = { name: 'items', ttl: TTL, jitter: 0, loadTimeout: 5_000, sweepInterval: 100, clock, l2, ...(bus === 'no bus' ? {} : { bus: lossyBus(new Set([1])) }) }
        const a = createTable<string>(shared)
        const b = createTable<string>(shared) // subscriber 1: hears nothing
        let origin = 'v0'
        const slow = latchedLoader<string>()
        const read = b.fetch('x', slow.loader) // b's loader reads v0, and is slow
        await settle()
        origin = 'v1'
        const done = change === 'put' ? await a.put('x', origin) : await a.invalidate('x')
        expect(done).toMatchObject({ applied: true, l2: 'written' })
        expect(await a.fetch('x', () => origin)).toBe('v1') // after an invalidate, a's refill at its version
        clock.advance(TTL + 100) // the change's row has expired; b's load is still within loadTimeout
        await settle()
        slow.only().resolve('v0')
        expect(await read).toBe('v0') // its own callers get its answer
        await settle()
        const c = createTable<string>(shared) // a process started now
        expect(await c.fetch('x', () => origin)).toBe('v1')
        expect(await a.fetch('x', () => origin)).toBe('v1')
        expect((await l2.get('items', 'x'))?.value).toBe('v1')
        expect(b.stats().fenced).toBe(1) // L2 refused its write-back, so b keeps no row of it
        expect(await b.fetch('x', () => origin)).toBe('v1')
        await Promise.all([a.close(), b.close(), c.close()])
      })
    }
  }

  it('past its row’s expiry the standing entry answers no read, and the load that reads it writes at its version', async () => {
    const clock = manualClock(1_000_000)
    const l2 = memoryL2({ clock })
    const table = createTable<string>({ name: 'items', ttl: TTL, jitter: 0, loadTimeout: 5_000, clock, l2 })
    const put = await table.put('x', 'v1')
    clock.advance(TTL + 100)
    const held = await l2.get('items', 'x')
    expect(held).toMatchObject({ version: put.version }) // still standing, past its expiry
    expect(held!.ttl).toBeLessThanOrEqual(0)
    const cold = createTable<string>({ name: 'items', ttl: TTL, jitter: 0, loadTimeout: 5_000, clock, l2 })
    expect(await cold.fetch('x', () => 'v2')).toBe('v2') // no answer from the standing entry: the loader's
    expect(await l2.get('items', 'x')).toMatchObject({ value: 'v2', version: put.version })
    expect(cold.stats()).toMatchObject({ loads: 1, l2_hits: 0, fenced: 0, fills: 1 })
    await Promise.all([table.close(), cold.close()])
  })
})
