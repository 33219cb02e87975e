/**
 * A namespace's refusals name the caller's id, while events and the errors of a load (a timeout)
 * name the id by its key in the table: the namespace's key, never the bare id of another scope.
 */
import { describe, expect, it } from 'vitest'
import { LoadTimeoutError, createTable } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { outcome, settle } from './support/latch.js'

describe("a namespace's load", () => {
  it('is told in the load and fill events by its key in the table, the same key for both, not the caller’s id', async () => {
    const table = createTable<string>({ name: 'keys', clock: manualClock() })
    const acme = table.namespace('acme')
    const seen: { event: string; id: unknown }[] = []
    table.events.on('load', ({ id }) => seen.push({ event: 'load', id }))
    table.events.on('fill', ({ id }) => seen.push({ event: 'fill', id }))
    expect(await acme.fetch('x', () => 'v')).toBe('v')
    expect(seen.map((e) => e.event)).toEqual(['load', 'fill'])
    const [load, fill] = seen
    expect(load!.id).not.toBe('x')
    expect(fill!.id).toBe(load!.id)
    expect(String(load!.id)).toContain('acme')
    await table.close()
  })

  it('that times out fails with a LoadTimeoutError naming its key in the table, as its error event does', async () => {
    const clock = manualClock()
    const table = createTable<string>({ name: 'keys', clock, loadTimeout: 100 })
    const acme = table.namespace('acme')
    const errors: unknown[] = []
    table.events.on('error', ({ id }) => errors.push(id))
    const read = outcome(acme.fetch('x', () => new Promise<string>(() => {})))
    await settle()
    clock.advance(100)
    await settle()
    expect(read.state).toBe('rejected')
    expect(read.error).toBeInstanceOf(LoadTimeoutError)
    const id = (read.error as LoadTimeoutError).id
    expect(id).not.toBe('x')
    expect(String(id)).toContain('acme')
    expect(errors).toEqual([id])
    await table.close()
  })
})
