import { describe, expect, it } from 'vitest'
import { manualClock } from '../src/testing.js'
import { createCatalog, emojiDb } from '../examples/emoji-catalog/catalog.js'
import { Guesses } from '../examples/emoji-catalog/guesses.js'
import { main } from '../examples/emoji-catalog/load.js'
import { settle } from './support/latch.js'

const quiet = () => {}

describe('examples/emoji-catalog', () => {
  it('Guesses.submit answers the set, or bad_guess for a code the keyboard does not expose', async () => {
    const clock = manualClock()
    const db = emojiDb(clock, 50)
    const catalog = createCatalog({ db, clock })
    const guesses = new Guesses(catalog)
    const round = { id: 1, setId: 'party' }
    const first = guesses.submit(round, 'tada')
    const wrong = guesses.submit(round, 'unicorn')
    const inherited = guesses.submit(round, 'toString') // not an own key of the keyboard
    await settle() // the miss reaches the database
    clock.advance(50)
    const set = await first
    expect(set).toMatchObject({ id: 'party', keyboard: { tada: '🎉' } })
    expect(await wrong).toEqual({ error: 'bad_guess' })
    expect(await inherited).toEqual({ error: 'bad_guess' })
    const missing = guesses.submit({ id: 2, setId: 'no-such-set' }, 'tada')
    await settle()
    clock.advance(50)
    expect(await missing).toEqual({ error: 'bad_guess' })
    expect(db.calls.filter((call) => call.id === 'party')).toHaveLength(1)
    expect(catalog.table.stats()).toMatchObject({ misses: 4, coalesced: 2, loads: 2 })
    await catalog.close()
  })

  it('load.ts: exactly one load per expiry herd, and counters consistent with the table', async () => {
    const result = await main({ scale: 0.25, log: quiet })
    const { stats, herds, guesses } = result
    const hot = herds.filter((herd) => herd.set === 'party')
    // The cold herd and at least two expiry herds of the hot set, each of many readers.
    expect(hot[0]!.kind).toBe('cold')
    expect(hot.filter((herd) => herd.kind === 'expiry').length).toBeGreaterThanOrEqual(2)
    for (const herd of hot) expect(herd.readers).toBeGreaterThan(100)
    // Every herd (hot or not) cost one load, and every reader of it got the one object.
    for (const herd of herds) {
      expect(herd.loads, `herd of ${herd.set} at ${herd.at}`).toBe(1)
      expect(herd.sameObject).toBe(true)
    }
    // The table's counters agree with the game's own log and the database's own count.
    expect(stats.hits + stats.misses).toBe(guesses.total)
    expect(stats.misses).toBe(stats.flights + stats.coalesced)
    expect(stats.misses).toBe(herds.reduce((n, herd) => n + herd.readers, 0))
    expect(stats.coalesced).toBe(herds.reduce((n, herd) => n + herd.readers - 1, 0))
    expect(stats.loads).toBe(result.dbCalls)
    expect(stats.loads).toBe(herds.length)
    expect(stats.inflight).toBe(0)
    expect(guesses.bad).toBeGreaterThan(0)
  })

  it('load.ts with the single-flight off: the same herds cost one load per reader', async () => {
    const result = await main({ scale: 0.25, coalesce: false, log: quiet })
    const hot = result.herds.filter((herd) => herd.set === 'party')
    for (const herd of hot) {
      expect(herd.loads).toBe(herd.readers)
      expect(herd.sameObject).toBe(false)
    }
    expect(result.stats.coalesced).toBe(0)
    expect(result.stats.loads).toBe(result.stats.misses)
  })
})
