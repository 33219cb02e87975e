/**
 * When L2 answered a flight's read (a miss: L2 was reachable), the loader's answer is in L2 before
 * the waiters get it, so once `fetch` resolves another process finds it there. When L2 did not
 * answer (it failed), the waiters are not held for a write-back.
 */
import { describe, expect, it } from 'vitest'
import { createTable, memoryL2 } from '../src/index.js'
import type { L2Store } from '../src/store.js'
import { chaosL2, manualClock } from '../src/testing.js'
import { outcome, settle } from './support/latch.js'

/** `store` with its writes held until `open` is called. */
function heldWrites(store: L2Store): { l2: L2Store; open: () => void; asked: () => number } {
  let open!: () => void
  const opened = new Promise<void>((resolve) => (open = resolve))
  let asked = 0
  const l2: L2Store = {
    ...store,
    async set(table, id, entry) {
      asked++
      await opened
      return store.set(table, id, entry)
    },
  }
  return { l2, open, asked: () => asked }
}

describe("a flight's write-back", () => {
  it('lands before the waiters are answered when L2 answered the read', async () => {
    const clock = manualClock(0)
    const store = memoryL2({ clock })
    const held = heldWrites(store)
    const table = createTable<string>({ name: 'wb', clock, l2: held.l2, sweepInterval: 1e9 })
    const read = outcome(table.fetch('k', () => 'v'))
    await settle()
    expect(held.asked()).toBe(1)
    expect(read.state).toBe('pending') // held for the write-back
    held.open()
    await settle()
    expect(read.value).toBe('v')
    const other = createTable<string>({ name: 'wb', clock, l2: store })
    expect(await other.fetch('k', () => 'origin again')).toBe('v')
    await Promise.all([table.close(), other.close()])
  })

  it('does not hold the waiters when L2 failed the read', async () => {
    const clock = manualClock(0)
    const chaos = chaosL2(memoryL2({ clock }), clock)
    const held = heldWrites(chaos)
    const table = createTable<string>({ name: 'wb', clock, l2: held.l2, sweepInterval: 1e9 })
    chaos.fail('get', { kind: 'throw' })
    const read = outcome(table.fetch('k', () => 'v'))
    await settle()
    expect(read.value).toBe('v') // answered while its write-back waits
    held.open()
    await settle()
    await table.close()
  })
})
