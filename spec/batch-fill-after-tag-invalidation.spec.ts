/**
 * A batch flight in progress in a process that hears nothing (no bus) when another process
 * invalidates a tag: its ids' answers reach their callers, but no process reads from L2 an entry it
 * loaded before the invalidation for an id it tagged, in the base table or in a namespace; an
 * untagged id's entry stays readable.
 */
import { describe, expect, it } from 'vitest'
import { type Id, type Table, createTable, memoryL2 } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { latchedBatchLoader, outcome, settle } from './support/latch.js'

describe('a batch that writes L2 after a tag invalidation it did not hear', () => {
  for (const ns of [undefined, 'acme']) {
    it(`leaves no entry from before it for the tagged id (${ns === undefined ? 'base table' : 'a namespace'})`, async () => {
      const clock = manualClock(0)
      const l2 = memoryL2({ clock })
      const options = { name: 't', ttl: 60_000, jitter: 0, sweepInterval: 1e9, clock, l2 }
      const view = (t: Table<string, Id>) => (ns === undefined ? t : t.namespace(ns))
      const [here, there] = [createTable<string, Id>(options), createTable<string, Id>(options)]
      const origin = latchedBatchLoader<string>()
      const page = outcome(view(there).fetchMany(['a', 'b'], origin.loader))
      await settle()
      await here.invalidateTags(['t'])
      origin.only().context.setTags('a', ['t'])
      origin.only().resolve(['A old', 'B'])
      await settle()
      expect(page.value).toEqual(['A old', 'B'])
      const cold = createTable<string, Id>(options)
      expect(await view(cold).fetch('a', () => 'A new')).toBe('A new')
      expect(await view(cold).fetch('b', () => 'never')).toBe('B')
      await Promise.all([here.close(), there.close(), cold.close()])
    })
  }
})
