/**
 * The owner is an xstate actor whose state lives in its snapshot: an inspection observer passed as
 * the `inspect` option sees every batch of messages it receives and every snapshot it commits.
 */
import type { InspectionEvent } from 'xstate'
import { describe, expect, it } from 'vitest'
import { createTable } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { latchedLoader, settle } from './support/latch.js'

type Batch = { type: 'batch'; messages: { type: string; id?: unknown; count?: number }[] }

function recorder() {
  const batches: Batch[] = []
  const snapshots: { status: string; context: { inflight: number; closing: boolean } }[] = []
  const inspect = (event: InspectionEvent) => {
    if (event.type === '@xstate.event' && event.event.type === 'batch') batches.push(event.event as unknown as Batch)
    if (event.type === '@xstate.snapshot') snapshots.push(event.snapshot as unknown as (typeof snapshots)[number])
  }
  return { batches, snapshots, inspect }
}

describe('the owner actor and its inspection', () => {
  it('a herd of plain misses in one turn reaches the owner as one message carrying its count', async () => {
    const seen = recorder()
    const table = createTable<string | undefined>({ clock: manualClock(), inspect: seen.inspect })
    const origin = latchedLoader<string>()
    const readers = Array.from({ length: 50 }, () => table.fetch('k', origin.loader))
    await settle()
    expect(seen.batches[0]!.messages).toEqual([expect.objectContaining({ type: 'miss', id: 'k', count: 50 })])
    origin.only().resolve('v')
    expect(new Set(await Promise.all(readers))).toEqual(new Set(['v']))
    expect(table.stats()).toMatchObject({ misses: 50, flights: 1, coalesced: 49 })
    await table.close()
  })

  it('every committed snapshot holds the state stats() reports, and the last one is done', async () => {
    const seen = recorder()
    const table = createTable<string | undefined>({ clock: manualClock(), inspect: seen.inspect })
    const origin = latchedLoader<string>()
    const reader = table.fetch('k', origin.loader)
    await settle()
    expect(seen.snapshots.at(-1)!.context.inflight).toBe(1)
    expect(table.stats().inflight).toBe(1)
    origin.only().resolve('v')
    await reader
    expect(seen.snapshots.at(-1)!.context.inflight).toBe(0)
    await table.close()
    expect(seen.snapshots.at(-1)).toMatchObject({ status: 'done', context: { closing: true, inflight: 0 } })
  })

  it('accepts an observer object as well as a function, and refuses anything else naming the option', async () => {
    const events: string[] = []
    const table = createTable<string | undefined>({ clock: manualClock(), inspect: { next: (event) => events.push(event.type) } })
    await table.fetch('k', () => 'v')
    expect(events).toContain('@xstate.event')
    await table.close()
    for (const bad of [42, 'log', {}, { next: 1 }]) {
      expect(() => createTable({ inspect: bad as never })).toThrow(/option "inspect" must be an xstate inspection observer/)
    }
  })

  it('a delivery that throws when read is counted invalid in the owner, never thrown into it', async () => {
    const errors: unknown[] = []
    const hostile = new Proxy(
      {},
      {
        get: () => {
          throw new Error('hostile getter')
        },
      },
    )
    const bus = { publish: async () => {}, subscribe: (handler: (delivery: unknown) => void) => (handler(hostile), () => {}), close: async () => {} }
    const table = createTable<string | undefined>({ clock: manualClock(), bus: bus as never })
    table.events.on('error', ({ error }) => errors.push(error))
    expect(table.stats().coh_invalid).toBe(1)
    expect(await table.fetch('k', () => 'v')).toBe('v')
    expect(errors).toEqual([])
    await table.close()
  })
})
