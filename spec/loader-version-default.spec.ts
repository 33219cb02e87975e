/**
 * `setVersion(version)`: "without it the row takes the highest version known when the load
 * started". A load after a change at version 7 that reports no version stores a row at 7: an
 * older change (6) is refused by it, a newer one (8) replaces it; a bus message at 6 is stale.
 */
import { describe, expect, it } from 'vitest'
import { type Id, createTable, localBus } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { latchedLoader, settle } from './support/latch.js'

describe('a load that reports no version', () => {
  it('takes the highest version the table knew of the id when the load started', async () => {
    const table = createTable<string, Id>({ clock: manualClock() })
    await table.invalidate('k', { version: 7 })
    expect(await table.fetch('k', () => 'loaded')).toBe('loaded')
    expect(table.peek('k')).toBe('loaded')
    expect(await table.put('k', 'older', { version: 6 })).toMatchObject({ applied: false })
    expect(table.peek('k')).toBe('loaded')
    expect(await table.put('k', 'newer', { version: 8 })).toMatchObject({ applied: true })
    expect(table.peek('k')).toBe('newer')
    await table.close()
  })

  it('a message heard on the bus below that version is stale; one above it drops the row', async () => {
    const clock = manualClock()
    const bus = localBus()
    const table = createTable<string, Id>({ clock, bus })
    const peer = createTable<string, Id>({ clock, bus })
    await table.invalidate('k', { version: 7 })
    const origin = latchedLoader<string>()
    const read = table.fetch('k', origin.loader)
    await settle()
    origin.only().resolve('loaded')
    expect(await read).toBe('loaded')
    await peer.invalidate('k', { version: 6 })
    await settle()
    expect(table.peek('k')).toBe('loaded')
    expect(table.stats().coh_stale).toBe(1)
    await peer.invalidate('k', { version: 9 })
    await settle()
    expect(table.has('k')).toBe(false)
    await Promise.all([table.close(), peer.close()])
  })
})
