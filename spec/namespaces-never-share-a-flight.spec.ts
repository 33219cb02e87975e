/**
 * The coalescing law: "Different ids, tables and tenants never share a flight." Tenants are a
 * table's namespaces: the base table, two namespaces and a nested one, each missing the same id
 * in the same turn, make a flight each, and each gets its own loader's answer.
 */
import { describe, expect, it } from 'vitest'
import { type Id, createTable, memoryL2 } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { latchedLoader, settle } from './support/latch.js'

describe('namespaces of one table', () => {
  it.each([false, true])('never share a flight for one id, in one turn (L2: %s)', async (withL2) => {
    const clock = manualClock()
    const table = createTable<string, Id>({ clock, ...(withL2 && { l2: memoryL2({ clock }) }) })
    const views = [table, table.namespace('acme'), table.namespace('umbrella'), table.namespace('acme').namespace('eu')]
    const origin = latchedLoader<string>()
    const reads = views.flatMap((view) => [view.fetch('x', origin.loader), view.fetch('x', origin.loader)])
    await settle()
    await settle()
    expect(origin.calls).toHaveLength(4)
    expect(origin.calls.map((call) => call.id)).toEqual(['x', 'x', 'x', 'x']) // each loader sees the caller's id
    origin.calls.forEach((call, i) => call.resolve(`answer ${i}`))
    const answers = await Promise.all(reads)
    expect(new Set(answers).size).toBe(4)
    for (let i = 0; i < 4; i++) expect(answers[2 * i]).toBe(answers[2 * i + 1]) // callers of one tenant share
    expect(table.stats()).toMatchObject({ misses: 8, flights: 4, coalesced: 4, loads: 4 })
    await table.close()
  })
})
