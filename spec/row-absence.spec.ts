import { describe, expect, it } from 'vitest'
import { manualClock } from '../src/testing.js'
import { NOT_LIVE, RowStore } from '../src/rows/row-store.js'

// A cold miss's turn skips its id's row lookup on the read's proof that the id had none: the proof
// holds only while no id is added to the rows, so a row written since is always found.
describe('the rows’ proof that an id has no row', () => {
  it('holds after a read found no row for the id, and spares the lookup', () => {
    const rows = new RowStore<string>(10)
    expect(rows.live('k', manualClock(0))).toBe(NOT_LIVE)
    const absence = rows.absence('k')
    expect(absence).toBeGreaterThanOrEqual(0)
    expect(rows.findAbsent('k', absence)).toBe(-1)
  })

  it('is no proof for another id, nor for an id the read found a row for', () => {
    const rows = new RowStore<string>(10)
    const clock = manualClock(0)
    rows.write('a', 'A', 100, 0)
    expect(rows.live('k', clock)).toBe(NOT_LIVE)
    expect(rows.absence('j')).toBe(-1)
    expect(rows.live('a', clock)).toBe('A')
    expect(rows.absence('a')).toBe(-1)
  })

  it('ends when any id is added: a row the id gained since is found', () => {
    const rows = new RowStore<string>(10)
    expect(rows.live('k', manualClock(0))).toBe(NOT_LIVE)
    const absence = rows.absence('k')
    rows.write('k', 'K', 100, 0)
    expect(rows.absence('k')).toBe(-1)
    expect(rows.findAbsent('k', absence)).toBe(rows.find('k'))
    expect(rows.findAbsent('k', absence)).toBeGreaterThanOrEqual(0)
  })

  it('ends when another id is added too (the proof does not say which)', () => {
    const rows = new RowStore<string>(10)
    expect(rows.live('k', manualClock(0))).toBe(NOT_LIVE)
    const absence = rows.absence('k')
    rows.write('other', 'O', 100, 0)
    expect(rows.absence('k')).toBe(-1)
    rows.write('k', 'K', 100, 0)
    expect(rows.findAbsent('k', absence)).toBeGreaterThanOrEqual(0)
  })
})
