/**
 * Two copies of EchoStore in one process (an ES module and a CommonJS build side by side, or two
 * versions under node_modules) raise errors that `instanceof` still recognises: every error class
 * checks a registered brand as well as its prototype chain.
 */
import { describe, expect, it, vi } from 'vitest'
import * as first from '../src/index.js'

/** A second, separate copy of the package's module graph: its classes are other objects. */
async function secondCopy(): Promise<typeof first> {
  vi.resetModules()
  const copy = (await import('../src/index.js')) as typeof first
  vi.resetModules()
  return copy
}

describe('errors keep instanceof across two copies of the package', () => {
  it('a copy is really another module graph: its classes are other objects', async () => {
    const second = await secondCopy()
    expect(second.TableClosedError).not.toBe(first.TableClosedError)
  })

  it("an error a table of one copy raises is an instance of the other copy's class, its parents and the base", async () => {
    const second = await secondCopy()
    const table = second.createTable<string>({ name: 'copies' })
    await table.close()
    const error = await table.fetch('a', () => 'value').catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(second.TableClosedError)
    expect(error).toBeInstanceOf(first.TableClosedError)
    expect(error).toBeInstanceOf(first.TableError)
    expect(error).toBeInstanceOf(first.EchoStoreError)
    expect(error).toBeInstanceOf(Error)
  })

  it("another class's error, a plain error and a look-alike without the brand are not instances", async () => {
    const second = await secondCopy()
    const closed = new second.TableClosedError('t', 'a')
    expect(closed).not.toBeInstanceOf(first.FetchTimeoutError)
    expect(closed).not.toBeInstanceOf(first.LoadTimeoutError)
    expect(new Error('plain')).not.toBeInstanceOf(first.EchoStoreError)
    const lookAlike = Object.assign(new Error('echostore: fake'), { name: 'TableClosedError', code: 'ECHOSTORE_TABLE_CLOSED' })
    expect(lookAlike).not.toBeInstanceOf(first.TableClosedError)
    for (const value of [null, undefined, 'TableClosedError', 42, {}]) expect(value instanceof first.EchoStoreError).toBe(false)
  })

  it('the brand is not enumerable: a logged or serialised error shows no extra field', () => {
    const error = new first.TableClosedError('t', 'a')
    expect(Object.keys(error)).not.toContain(Symbol.for('echostore.error.classes').toString())
    expect(Object.getOwnPropertySymbols(error).every((symbol) => !Object.getOwnPropertyDescriptor(error, symbol)?.enumerable)).toBe(true)
    expect(JSON.stringify(error)).not.toContain('EchoStoreError')
  })
})
