/**
 * A `TableClosedError` names the call that was refused, with the caller's id: `get("a")` on a
 * closed table says `get("a")`, a closed view's `peek("a")` and `has("a")` say `peek("a")` and
 * `has("a")` (never `fetch`). And a view's `close()`, like the table's, returns the same promise
 * every time.
 */
import { describe, expect, it } from 'vitest'
import { TableClosedError, createTable } from '../src/index.js'
import { manualClock } from '../src/testing.js'

function caught(call: () => unknown): unknown {
  try {
    call()
  } catch (error) {
    return error
  }
  return undefined
}

describe('a TableClosedError names the refused call', () => {
  it('get("a") on a closed table (plain, and with options) names get("a")', async () => {
    const table = createTable<string>({ name: 'shut', clock: manualClock(), loader: (id) => id })
    await table.close()
    for (const read of [table.get('a'), table.get('a', { timeout: 5 })]) {
      const error = await read.then(
        () => undefined,
        (e: unknown) => e,
      )
      expect(error).toBeInstanceOf(TableClosedError)
      expect(error).toMatchObject({ table: 'shut', id: 'a' })
      expect((error as Error).message).toBe('echostore: table "shut" is closed; get("a") was refused (a closed table stays closed: make a new one with createTable())')
    }
    await expect(table.fetch('a', () => 'v')).rejects.toThrow(/; fetch\("a"\) was refused/)
  })

  it('get("a") in a view of a closed table names get("a")', async () => {
    const table = createTable<string>({ name: 'shut', clock: manualClock(), loader: (id) => id })
    const view = table.namespace('acme')
    await table.close()
    await expect(view.get('a')).rejects.toThrow(/; get\("a"\) was refused/)
    await expect(view.fetch('a', () => 'v')).rejects.toThrow(/; fetch\("a"\) was refused/)
  })

  it('peek("a") and has("a") on a closed view name the view, peek("a") and has("a"), with the caller’s id, while the table is open', async () => {
    const table = createTable<string>({ name: 'shut', clock: manualClock() })
    const view = table.namespace('acme')
    await view.close()
    const peek = caught(() => view.peek('a'))
    const has = caught(() => view.has('a'))
    expect(peek).toBeInstanceOf(TableClosedError)
    expect(has).toBeInstanceOf(TableClosedError)
    expect(peek).toMatchObject({ table: 'shut', id: 'a' })
    expect((peek as Error).message).toBe('echostore: namespace "acme" of table "shut" is closed; peek("a") was refused (a closed view stays closed: table.namespace(name) makes a new one)')
    expect((has as Error).message).toBe('echostore: namespace "acme" of table "shut" is closed; has("a") was refused (a closed view stays closed: table.namespace(name) makes a new one)')
    expect(table.peek('a')).toBeUndefined()
    await table.close()
  })

  it('a closed nested view names its whole path; every call it refuses says so', async () => {
    const table = createTable<string>({ name: 'shut', clock: manualClock(), loader: (id) => id })
    const view = table.namespace('acme').namespace('eu')
    await view.close()
    const closed = 'echostore: namespace "acme" / "eu" of table "shut" is closed;'
    await expect(view.get('a')).rejects.toThrow(`${closed} get("a") was refused`)
    await expect(view.fetch('a', () => 'v')).rejects.toThrow(`${closed} fetch("a") was refused`)
    await expect(view.put('a', 'v')).rejects.toThrow(`${closed} put("a") was refused`)
    await expect(view.clear()).rejects.toThrow(`${closed} clear() was refused`)
    await expect(view.invalidateTags(['t'])).rejects.toThrow(`${closed} invalidateTags() was refused`)
    expect(() => view.namespace('x')).toThrow(`${closed} namespace() was refused`)
    await table.close()
  })
})

describe('a view’s close()', () => {
  it('returns the same promise every time, which resolves', async () => {
    const table = createTable<string>({ clock: manualClock() })
    const view = table.namespace('acme')
    const first = view.close()
    expect(view.close()).toBe(first)
    expect(view[Symbol.asyncDispose]()).toBe(first)
    await expect(first).resolves.toBeUndefined()
    await table.close()
  })
})

describe('after close', () => {
  it('put and invalidate are refused with an error that names the operation', async () => {
    const table = createTable<string | undefined>({ name: 'shut', clock: manualClock() })
    await table.close()
    await expect(table.put('a', 'v')).rejects.toThrow(/table "shut" is closed; put\("a"\) was refused/)
    await expect(table.invalidate('a')).rejects.toThrow(/invalidate\("a"\) was refused/)
    await expect(table.fetch('a', () => 'v')).rejects.toThrow(/fetch\("a"\) was refused/)
  })
})
