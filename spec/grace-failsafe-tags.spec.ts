/**
 * A graced value the fail-safe takes out of L2 and stores as the row keeps what made the entry
 * stale-able: its tags, and the namespace its key is in. A later invalidateTags (or a namespace's
 * clear) must stop it answering, during the back-off too.
 */
import { describe, expect, it } from 'vitest'
import { type Id, type LoaderContext, createTable, localBus, memoryL2 } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { settle } from './support/latch.js'

const TTL = 1_000
const GRACE = 60_000

function processes() {
  const clock = manualClock(0)
  const l2 = memoryL2({ clock })
  const bus = localBus()
  const make = () => createTable<string | undefined, Id>({ name: 'fs', ttl: TTL, grace: GRACE, jitter: 0, sweepInterval: 1e9, clock, l2, bus })
  return { clock, make }
}

const down = async (): Promise<string> => {
  throw new Error('origin down')
}

describe("the fail-safe's graced value from L2", () => {
  it('stored as the row, goes stale with its tags: invalidateTags stops it answering during the back-off', async () => {
    const { clock, make } = processes()
    const writer = make()
    await writer.fetch('a', async (_id: Id, context: LoaderContext) => {
      context.setTags(['t'])
      return 'v1'
    })
    clock.advance(TTL + 1) // the L2 entry is graced
    const cold = make()
    expect(await cold.fetch('a', down)).toBe('v1') // the fail-safe answers L2's graced value
    expect(await cold.invalidateTags(['t'])).toMatchObject({ applied: true, l2: 'written' })
    await settle()
    await expect(cold.fetch('a', down)).rejects.toThrow('origin down')
    await Promise.all([writer.close(), cold.close()])
  })

  it("stored as a namespace's row, goes with the namespace's clear()", async () => {
    const { clock, make } = processes()
    const writer = make().namespace('n')
    await writer.fetch('a', async () => 'v1')
    clock.advance(TTL + 1)
    const cold = make().namespace('n')
    expect(await cold.fetch('a', down)).toBe('v1')
    await cold.clear()
    await settle()
    await expect(cold.fetch('a', down)).rejects.toThrow('origin down')
    await Promise.all([writer.close(), cold.close()])
  })

  it('newer than the row held, replaces it and keeps its tags', async () => {
    const { clock, make } = processes()
    const [older, newer] = [make(), make()]
    const tagged = (value: string) => async (_id: Id, context: LoaderContext) => {
      context.setTags(['t'])
      context.setVersion(value === 'v1' ? 1 : 2)
      return value
    }
    await older.fetch('a', tagged('v1'))
    clock.advance(10)
    await newer.fetch('a', tagged('v2'), { forceRefresh: true }) // L2 holds v2, version 2
    clock.advance(TTL + 1) // both graced
    expect(await older.fetch('a', down)).toBe('v2') // the newest graced value
    await older.invalidateTags(['t'])
    await settle()
    await expect(older.fetch('a', down)).rejects.toThrow('origin down')
    await Promise.all([older.close(), newer.close()])
  })
})
