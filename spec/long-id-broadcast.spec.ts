/**
 * Doubtful: the README says an id is "a string or a finite number" (any string), and that a change
 * "broadcasts" so the other instances drop their copy. The wire format caps a coherence message at
 * 128 KiB and a string id at 65,536 code units (`MAX_ID_LENGTH`, not in the README), so a longer id
 * is read, cached and changed like any other, but its changes never reach the bus: `put` resolves
 * `broadcast: false` (counted in `bus_errors`) and every other instance serves its old row until it
 * expires. Found by the soak's edge ids (a 70,000-char id). Either such ids should be refused
 * everywhere, or changes should carry them; this test states the README's promise.
 */
import { describe, expect, it } from 'vitest'
import { createTable, localBus, manualClock } from '../src/index.js'

describe('an id longer than the bus carries', () => {
  it.fails('has its put broadcast to the other tables on the bus', async () => {
    const clock = manualClock()
    const bus = localBus()
    const writer = createTable<string>({ name: 'docs', clock, bus })
    const reader = createTable<string>({ name: 'docs', clock, bus })
    const id = 'x'.repeat(70_000)
    expect(await reader.fetch(id, () => 'old')).toBe('old')
    const result = await writer.put(id, 'new')
    expect(result).toMatchObject({ applied: true, broadcast: true })
    expect(await reader.fetch(id, () => 'reloaded')).not.toBe('old')
    await Promise.all([writer.close(), reader.close()])
  })
})
