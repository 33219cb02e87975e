/**
 * A batch read with a signal listens to the caller's signal once for the whole call, not once per id
 * that misses: a page of more than ten cold ids would otherwise make Node warn of a possible
 * listener leak (`MaxListenersExceededWarning`) for a single call. Aborting it still leaves every
 * id's wait, with the signal's reason, and nothing stays on the signal once the call settles.
 */
import { getEventListeners } from 'node:events'
import { describe, expect, it } from 'vitest'
import { type Id, createTable } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { latchedBatchLoader, outcome, settle } from './support/latch.js'

describe('getMany(ids, { signal })', () => {
  const ids = Array.from({ length: 20 }, (_, i) => `product ${i}`)

  it('listens to the caller’s signal once per call, not once per id, and Node warns of nothing', async () => {
    const warnings: Error[] = []
    const onWarning = (warning: Error) => warnings.push(warning)
    process.on('warning', onWarning)
    const origin = latchedBatchLoader<string | undefined>()
    const table = createTable<string | undefined, Id>({ clock: manualClock(0), batchLoader: origin.loader })
    const request = new AbortController()
    const page = outcome(table.getMany(ids, { signal: request.signal }))
    await settle()
    expect(origin.only().ids).toHaveLength(20)
    expect(getEventListeners(request.signal, 'abort')).toHaveLength(1)
    origin.only().resolve(ids.map((id) => `row ${id}`))
    await settle()
    await new Promise<void>((resolve) => process.nextTick(resolve)) // a warning is emitted on the next tick
    process.off('warning', onWarning)
    expect(page.state).toBe('fulfilled')
    expect(getEventListeners(request.signal, 'abort')).toHaveLength(0)
    expect(warnings.map((w) => w.name)).not.toContain('MaxListenersExceededWarning')
    await table.close()
  })

  it('an abort leaves every id’s wait with the signal’s reason, and the call leaves no listener', async () => {
    const origin = latchedBatchLoader<string | undefined>()
    const table = createTable<string | undefined, Id>({ clock: manualClock(0), batchLoader: origin.loader })
    const request = new AbortController()
    const page = outcome(table.getMany(ids, { signal: request.signal }))
    await settle()
    const reason = new Error('the client went away')
    request.abort(reason)
    await settle()
    expect(page.state).toBe('rejected')
    expect(page.error).toBe(reason)
    expect(table.stats()).toMatchObject({ cancelled: 20, inflight: 0 })
    expect(getEventListeners(request.signal, 'abort')).toHaveLength(0)
    expect(origin.only().context.signal.aborted).toBe(true)
    await table.close()
  })

  it('a signal whose reason cannot be read still rejects the call, with what its getter threw', async () => {
    const origin = latchedBatchLoader<string | undefined>()
    const table = createTable<string | undefined, Id>({ clock: manualClock(0), batchLoader: origin.loader })
    const request = new AbortController()
    const thrown = new Error('reason getter throws')
    Object.defineProperty(request.signal, 'reason', {
      get() {
        throw thrown
      },
    })
    const page = outcome(table.getMany(['a', 'b'], { signal: request.signal }))
    await settle()
    request.abort()
    await settle()
    expect(page.state).toBe('rejected')
    expect(page.error).toBe(thrown)
    await table.close()
  })
})
