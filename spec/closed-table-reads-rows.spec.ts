/**
 * "`peek` and `has` are refused only by a closed namespace view, and on a closed table they still
 * read its rows": after close(), fetches are refused, but peek, has and size still see the rows.
 */
import { describe, expect, it } from 'vitest'
import { type Id, TableClosedError, createTable } from '../src/index.js'
import { manualClock } from '../src/testing.js'

describe('a closed table', () => {
  it('still answers peek and has from its rows, a negative row included, and refuses fetch', async () => {
    const table = createTable<string | undefined, Id>({ clock: manualClock() })
    await table.fetch('a', () => 'A')
    await table.fetch('gone', () => undefined)
    await table.close()
    expect(table.peek('a')).toBe('A')
    expect(table.has('a')).toBe(true)
    expect(table.peek('gone')).toBeUndefined()
    expect(table.has('gone')).toBe(true)
    expect(table.has('never')).toBe(false)
    expect(table.size).toBe(2)
    await expect(table.fetch('a', () => 'B')).rejects.toBeInstanceOf(TableClosedError)
    expect(table.stats()).toMatchObject({ hits: 0, misses: 2 })
  })
})
