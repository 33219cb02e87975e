/**
 * A soft timeout never answers a graced value that a change made stale: a graced L2 entry born
 * before an invalidation of one of its tags, or before its namespace's clear(), is no graced value
 * to a process whose L1 is cold, whether L2 took the invalidation or not (the process knows of it).
 * The caller waits past the soft timeout for its load.
 */
import { describe, expect, it } from 'vitest'
import { type Id, type Loader, type LoaderContext, createTable, memoryL2 } from '../src/index.js'
import { type ManualClock, manualClock } from '../src/testing.js'
import { failingTagInvalidations } from './support/failing-tag-invalidations.js'
import { latchedLoader, outcome, settle } from './support/latch.js'

const TTL = 1_000
const GRACE = 10_000

function world(failTags: boolean) {
  const clock = manualClock(0)
  const inner = memoryL2({ clock })
  const l2 = failTags ? failingTagInvalidations(inner) : inner
  const options = { name: 'soft', ttl: TTL, jitter: 0, grace: GRACE, sweepInterval: 1e9, clock, l2 }
  return { clock, options, make: (extra: Record<string, unknown> = {}) => createTable<string, Id>({ ...options, ...extra }) }
}

const taggedValue = (value: string) => (_id: Id, context: LoaderContext) => (context.setTags(['t']), value)

/** Reads with `read`, past the entry's lifetime: the read still waits once its 100 ms soft timeout has passed, and answers its own load's 'new'. */
async function waitsPastSoftTimeoutForItsLoad(clock: ManualClock, read: (loader: Loader<string, Id>) => Promise<string>): Promise<void> {
  clock.set(TTL + 500) // the entry is past its lifetime, within its grace in L2
  const origin = latchedLoader<string>()
  const answer = outcome(read(origin.loader))
  await settle()
  clock.advance(100)
  await settle()
  expect(answer.state).toBe('pending')
  origin.only().resolve('new')
  await settle()
  expect(answer).toMatchObject({ state: 'fulfilled', value: 'new' })
}

describe('a soft timeout after a change', () => {
  for (const failTags of [false, true]) {
    it(`does not answer a graced L2 entry older than an invalidation of its tag (L2 ${failTags ? 'failed it' : 'took it'})`, async () => {
      const { clock, make } = world(failTags)
      const writer = make()
      expect(await writer.fetch('k', taggedValue('old'))).toBe('old')
      const reader = make({ softTimeout: 100 })
      expect((await reader.invalidateTags(['t'])).l2).toBe(failTags ? 'failed' : 'written')
      await waitsPastSoftTimeoutForItsLoad(clock, (loader) => reader.fetch('k', loader))
      expect(reader.stats().stale_hits).toBe(0)
      await Promise.all([writer.close(), reader.close()])
    })
  }

  it("does not answer a graced L2 entry of a namespace older than the namespace's clear()", async () => {
    const { clock, make } = world(false)
    const writer = make()
    expect(await writer.namespace('acme').fetch('k', () => 'old')).toBe('old')
    const reader = make({ softTimeout: 100 })
    await reader.namespace('acme').clear()
    await waitsPastSoftTimeoutForItsLoad(clock, (loader) => reader.namespace('acme').fetch('k', loader))
    await Promise.all([writer.close(), reader.close()])
  })
})
