/**
 * A loader's `setTtl(ms)` is "this answer's lifetime ... replacing ttl (or negativeTtl)", and a
 * put's `ttl` chooses its row's lifetime "as a loader's setTtl": so for an absent answer
 * (`undefined`) the lifetime given replaces `negativeTtl`, whatever that is, 0 included.
 */
import { describe, expect, it } from 'vitest'
import { type Id, createTable } from '../src/index.js'
import { manualClock } from '../src/testing.js'

describe('the lifetime of an absent answer given by setTtl or a put’s ttl', () => {
  it.each([0, 100, 5_000])('setTtl replaces negativeTtl (%s ms) for a loader that answers undefined', async (negativeTtl) => {
    const clock = manualClock()
    const table = createTable<string | undefined, Id>({ clock, jitter: 0, negativeTtl })
    let loads = 0
    const absent = (_id: Id, context: { setTtl(ms: number): void }) => (loads++, context.setTtl(1_000), undefined)
    expect(await table.fetch('k', absent)).toBeUndefined()
    clock.advance(999)
    expect(table.has('k')).toBe(true)
    expect(await table.fetch('k', absent)).toBeUndefined()
    expect(loads).toBe(1)
    expect(table.stats()).toMatchObject({ negative_hits: 1 })
    clock.advance(1)
    expect(table.has('k')).toBe(false)
    await table.close()
  })

  it.each([100, 5_000])('a put of undefined with a ttl replaces negativeTtl (%s ms)', async (negativeTtl) => {
    const clock = manualClock()
    const table = createTable<string | undefined, Id>({ clock, jitter: 0, negativeTtl })
    await table.put('k', undefined, { ttl: 1_000 })
    clock.advance(999)
    expect(table.has('k')).toBe(true)
    expect(table.peek('k')).toBeUndefined()
    clock.advance(1)
    expect(table.has('k')).toBe(false)
    await table.close()
  })
})
