/**
 * What a change (`put`, `invalidate`) did in L2 is in its outcome (`written`, `failed`, `none`,
 * `refused`); an invalidate's tombstone is in L2 before it resolves, even when L1 has no room for
 * one; and a change older than the version the table knows never reaches L2.
 */
import { describe, expect, it } from 'vitest'
import type { L2Store } from '../src/store.js'
import { createTable, memoryL2 } from '../src/index.js'
import { chaosL2, manualClock } from '../src/testing.js'
import { outcome, settle } from './support/latch.js'

describe('what L2 did with a change', () => {
  it('is written, failed or none', async () => {
    const clock = manualClock(0)
    const l2 = chaosL2(memoryL2({ clock }), clock)
    const withL2 = createTable<string | undefined>({ clock, l2 })
    expect(await withL2.put('k', 'v')).toMatchObject({ applied: true, l2: 'written' })
    l2.fail('set', { kind: 'throw' })
    expect(await withL2.invalidate('k')).toMatchObject({ applied: true, l2: 'failed' }) // retry it: other processes may read the old entry
    expect(await withL2.put('k', 'v2')).toMatchObject({ applied: true, l2: 'failed' })
    l2.heal()
    const alone = createTable<string | undefined>({ clock })
    expect(await alone.invalidate('k')).toMatchObject({ applied: true, l2: 'none' })
    await Promise.all([withL2.close(), alone.close()])
  })
})

describe('invalidate on a full table', () => {
  it('writes the L2 tombstone first: a fetch started after it resolves never gets the old entry', async () => {
    const clock = manualClock(1_000)
    const store = memoryL2({ clock })
    await store.set('table', 'd', { kind: 'value', value: 'OLD', version: 0, ttl: 60_000 }) // loaded by another process
    const latch = () => {
      let open!: () => void
      const opened = new Promise<void>((resolve) => (open = resolve))
      return { opened, open }
    }
    const tombstoneAsked = latch()
    const tombstoneHeld = latch()
    let replies: Promise<void> = Promise.resolve()
    const l2: L2Store = {
      ...store,
      timeout: 60_000,
      async get(table, id) {
        const entry = await store.get(table, id) // read now, answer later (a pipelined reply)
        await replies
        return entry
      },
      async set(table, id, entry) {
        if (entry.kind === 'tombstone') {
          tombstoneAsked.open()
          await tombstoneHeld.opened
        }
        return store.set(table, id, entry)
      },
    }
    const table = createTable<string | undefined>({ clock, capacity: 1, jitter: 0, l2 })
    await table.fetch('x', () => 'X') // full: 'd' has no row, so L1 can hold no tombstone for it
    const heldReplies = latch()
    replies = heldReplies.opened
    const invalidated = table.invalidate('d')
    await tombstoneAsked.opened
    const early = outcome(table.fetch('d', () => 'NEW')) // during the invalidate: it reads the old entry
    tombstoneHeld.open()
    await invalidated
    const late = table.fetch('d', () => 'NEW') // started after invalidate resolved
    heldReplies.open()
    expect(await late).toBe('NEW')
    await settle()
    expect(early.state).toBe('fulfilled')
    await table.close()
  })
})

describe('a change older than what the table knows', () => {
  it('never reaches L2, even when L2 lost the newer entry', async () => {
    const clock = manualClock(0)
    const l2 = memoryL2({ clock })
    const table = createTable<string | undefined>({ name: 't', clock, l2, ttl: 1_000, jitter: 0, loadTimeout: 500, sweepInterval: 1e9 })
    await table.put('q', 'v10', { version: 10 })
    clock.advance(1_001) // L2 lost it (its lifetime passed); L1 still holds the expired row and its version
    expect(await table.put('q', 'v5', { version: 5 })).toMatchObject({ applied: false, l2: 'refused' })
    expect(await table.invalidate('q', { version: 6 })).toMatchObject({ applied: false, l2: 'refused' })
    expect(await l2.get('t', 'q')).toBeUndefined()
    await table.close()
  })
})
