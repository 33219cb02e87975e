/**
 * With `negativeTtl: 0`, a loader answer of `undefined` removes any old row for the id: no graced
 * value of the old row answers afterwards, not even the fail-safe of a failing origin, and with an
 * L2 no process reads the old entry back, whether the answer replaced a live entry (a forced
 * refresh) or the graced one its load read. An answer kept for no time (`setTtl(0)`) does the same.
 */
import { describe, expect, it } from 'vitest'
import { type Loader, createTable, memoryL2 } from '../src/index.js'
import { manualClock } from '../src/testing.js'

const TTL = 1_000
const GRACE = 60_000
const fail = (): never => {
  throw new Error('origin down')
}

const OPTIONS = { name: 'absent', ttl: TTL, grace: GRACE, negativeTtl: 0, jitter: 0, sweepInterval: 1e9 }

/** Two tables on one L2 (a process and a cold one); the first loads 'old', lets it grace in both layers, then reloads it with `reload`. */
async function gracedInBothLayers(reload: Loader<string | undefined, string>) {
  const clock = manualClock(0)
  const l2 = memoryL2({ clock })
  const [table, cold] = [createTable<string | undefined>({ ...OPTIONS, clock, l2 }), createTable<string | undefined>({ ...OPTIONS, clock, l2 })]
  expect(await table.fetch('k', () => 'old')).toBe('old')
  clock.set(TTL + 1) // the row and its L2 entry are graced
  await table.fetch('k', reload)
  expect(table.has('k')).toBe(false)
  return { table, cold }
}

describe('a loader answering undefined with negativeTtl 0', () => {
  it('removes a graced row: a failing origin afterwards fails the fetch instead of answering the old value', async () => {
    const clock = manualClock(0)
    const table = createTable<string | undefined>({ name: 'absent', ttl: TTL, grace: GRACE, negativeTtl: 0, jitter: 0, sweepInterval: 1e9, clock })
    expect(await table.fetch('k', () => 'old')).toBe('old')
    clock.set(TTL + 1) // the row is graced
    expect(await table.fetch('k', () => undefined)).toBeUndefined()
    expect(table.has('k')).toBe(false)
    expect(table.stats().size).toBe(0)
    await expect(table.fetch('k', fail)).rejects.toThrow('origin down')
    expect(table.stats()).toMatchObject({ failsafe: 0, stale_hits: 0 })
    await table.close()
  })

  it('removes a live row on a forced refresh: the next read loads, here and in a process that reads L2', async () => {
    const clock = manualClock(0)
    const l2 = memoryL2({ clock })
    const options = { name: 'absent', ttl: TTL, grace: GRACE, negativeTtl: 0, jitter: 0, sweepInterval: 1e9, clock, l2 }
    const [table, cold] = [createTable<string | undefined>(options), createTable<string | undefined>(options)]
    expect(await table.fetch('k', () => 'old')).toBe('old')
    expect(await table.fetch('k', () => undefined, { forceRefresh: true })).toBeUndefined()
    expect(table.has('k')).toBe(false)
    let loads = 0
    expect(await table.fetch('k', () => (loads++, 'again'))).toBe('again')
    expect(await cold.fetch('k', () => (loads++, 'cold'))).toBe('again') // the reload's entry, not the old one
    expect(loads).toBe(1)
    await Promise.all([table.close(), cold.close()])
  })

  it('removes the graced L2 entry it read: a failing origin afterwards fails the fetch, here and in a cold process', async () => {
    const { table, cold } = await gracedInBothLayers(() => undefined)
    await expect(table.fetch('k', fail)).rejects.toThrow('origin down')
    await expect(cold.fetch('k', fail)).rejects.toThrow('origin down')
    expect(cold.stats()).toMatchObject({ failsafe: 0, stale_hits: 0 })
    await Promise.all([table.close(), cold.close()])
  })

  it('removes the graced L2 entry through a batch loader too', async () => {
    const clock = manualClock(0)
    const table = createTable<string | undefined>({ ...OPTIONS, clock, l2: memoryL2({ clock }) })
    expect(await table.fetchMany(['k'], () => ['old'])).toEqual(['old'])
    clock.set(TTL + 1)
    expect(await table.fetchMany(['k'], () => [undefined])).toEqual([undefined])
    expect(table.has('k')).toBe(false)
    await expect(table.fetchMany(['k'], fail)).rejects.toThrow('origin down')
    await table.close()
  })
})

describe('a loader answer not to be kept (setTtl(0))', () => {
  it('removes the graced L2 entry it replaces, as an absent answer does', async () => {
    const { table, cold } = await gracedInBothLayers((_id, context) => {
      context.setTtl(0)
      return 'new, not kept'
    })
    await expect(cold.fetch('k', fail)).rejects.toThrow('origin down')
    await Promise.all([table.close(), cold.close()])
  })
})
