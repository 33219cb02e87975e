/**
 * A loader that fetches its own id in its synchronous part gets `SelfFetchError` at once, also when
 * its flight was started in the same batch as another flight (the herd's shortcut applies to the
 * last plain miss of the turn).
 */
import { describe, expect, it } from 'vitest'
import { SelfFetchError, createTable } from '../src/index.js'
import { outcome, settle } from './support/latch.js'

describe('a loader fetching its own id', () => {
  it('in the same batch as another flight whose loader read the id first: SelfFetchError at once, and both flights answer', async () => {
    const table = createTable<string>({ sweepInterval: 1e9, loadTimeout: 1_000 })
    let inner: ReturnType<typeof outcome<string | undefined>> | undefined
    let viaA: ReturnType<typeof outcome<string | undefined>> | undefined
    const a = outcome(
      table.fetch('a', () => {
        viaA = outcome(table.fetch('b', () => 'unused')) // a plain miss on b: the turn's last
        return 'a'
      }),
    )
    const b = outcome(
      table.fetch('b', (id) => {
        inner = outcome(table.fetch(id, () => 'inner'))
        return 'b'
      }),
    )
    for (let i = 0; i < 5; i++) await settle()
    expect(inner?.error).toBeInstanceOf(SelfFetchError)
    expect(a.value).toBe('a')
    expect(b.value).toBe('b')
    expect(viaA?.value).toBe('b')
    await table.close()
  })

  it('when its id is the turn’s last plain miss: SelfFetchError at once', async () => {
    const table = createTable<string>({ sweepInterval: 1e9, loadTimeout: 1_000 })
    let inner: ReturnType<typeof outcome<string | undefined>> | undefined
    const self = outcome(
      table.fetch('a', (id) => {
        void table.fetch('c', () => 'c') // another plain miss in the loader's turn
        inner = outcome(table.fetch(id, () => 'inner'))
        return 'a'
      }),
    )
    for (let i = 0; i < 5; i++) await settle()
    expect(inner?.error).toBeInstanceOf(SelfFetchError)
    expect(self.value).toBe('a')
    await table.close()
  })
})
