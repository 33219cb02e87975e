/** A table's name travels in every bus message: any name a table accepts, the bus carries. */
import { describe, expect, it } from 'vitest'
import { createTable, localBus } from '../src/index.js'

describe('table names and the bus', () => {
  it('the longest name a table accepts still broadcasts, and the peer applies the change', async () => {
    const name = 'x'.repeat(1024)
    const bus = localBus()
    const writer = createTable<string>({ name, bus })
    const reader = createTable<string>({ name, bus })
    expect(await reader.fetch('a', () => 'old')).toBe('old')
    const change = await writer.invalidate('a')
    expect(change.broadcast).toBe(true)
    expect(reader.stats().coh_applied).toBe(1)
    expect(reader.has('a')).toBe(false)
    await Promise.all([writer.close(), reader.close(), bus.close()])
  })

  it('a longer name is refused at construction, naming the option and the limit', () => {
    expect(() => createTable({ name: 'x'.repeat(1025) })).toThrow(/option "name" must be at most 1024 characters/)
  })
})
