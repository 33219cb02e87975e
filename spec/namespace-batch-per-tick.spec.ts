/**
 * One batch per tick on a namespace: the reads of one namespace made in one tick with one batch
 * loader (the table's, or a `fetchMany`'s) go to it as one call, whichever view object of that
 * namespace made them; another namespace's reads (a nested one's too) go to a call of their own,
 * each asked with its callers' ids.
 */
import { describe, expect, it } from 'vitest'
import { type Id, createTable } from '../src/index.js'
import { manualClock } from '../src/testing.js'

function setup() {
  const calls: Id[][] = []
  const batchLoader = async (ids: readonly Id[]) => {
    calls.push([...ids])
    return ids.map((id) => `v${String(id)}`)
  }
  const table = createTable<string, Id>({ name: 'vb', clock: manualClock(0), jitter: 0, sweepInterval: 1e9, batchLoader })
  return { calls, batchLoader, table }
}

describe('one batch per tick in a namespace', () => {
  it('two view objects of one namespace (one per resolver) share one call', async () => {
    const { calls, table } = setup()
    const [a, b] = await Promise.all([table.namespace('acme').get('a'), table.namespace('acme').get('b')])
    expect([a, b]).toEqual(['va', 'vb'])
    expect(calls).toEqual([['a', 'b']])
    await table.close()
  })

  it("get and fetchMany with the table's own batch loader share one call, as on the base table", async () => {
    const base = setup()
    await Promise.all([base.table.get('a'), base.table.fetchMany(['b'], base.batchLoader)])
    expect(base.calls).toHaveLength(1)
    const { calls, batchLoader, table } = setup()
    const view = table.namespace('acme')
    await Promise.all([view.get('a'), view.fetchMany(['b'], batchLoader)])
    expect(calls).toHaveLength(1)
    await Promise.all([base.table.close(), table.close()])
  })

  it("two namespaces' reads of one tick go to a call each, with their own ids", async () => {
    const { calls, table } = setup()
    const acme = table.namespace('acme')
    const values = await Promise.all([acme.get('a'), table.namespace('beta').get('a'), acme.namespace('eu').get('a'), table.namespace('acme').get('b'), table.get('a')])
    expect(values).toEqual(['va', 'va', 'va', 'vb', 'va'])
    expect(calls).toEqual([['a', 'b'], ['a'], ['a'], ['a']])
    expect([acme.peek('b'), table.namespace('beta').peek('b'), table.peek('b')]).toEqual(['vb', undefined, undefined])
    await table.close()
  })

  it("a fetchMany's batch loader shares one call across view objects of one namespace", async () => {
    const { table } = setup()
    const calls: Id[][] = []
    const other = async (ids: readonly Id[]) => (calls.push([...ids]), ids.map((id) => `o${String(id)}`))
    const values = await Promise.all([table.namespace('acme').fetchMany(['a'], other), table.namespace('acme').fetchMany(['b', 'a'], other)])
    expect(values).toEqual([['oa'], ['ob', 'oa']])
    expect(calls).toEqual([['a', 'b']])
    await table.close()
  })

  it('a batch loader that sorts its ids in place and answers a Map gives each id its own value in a namespace, as on the base table', async () => {
    const { table } = setup()
    const sorting = async (ids: Id[]) => {
      ids.sort() // as for an IN list
      return new Map(ids.map((id) => [id, `s${String(id)}`]))
    }
    const view = table.namespace('acme')
    expect(await view.fetchMany(['z', 'y', 'x'], sorting)).toEqual(['sz', 'sy', 'sx'])
    expect(await table.fetchMany(['z', 'y', 'x'], sorting)).toEqual(['sz', 'sy', 'sx'])
    expect([view.peek('z'), view.peek('x')]).toEqual(['sz', 'sx']) // stored under their own keys too
    await table.close()
  })
})
