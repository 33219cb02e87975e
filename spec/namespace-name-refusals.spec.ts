/**
 * `namespace(name)` refuses a name as an id is refused: a TypeError for what is not a non-empty
 * string, a RangeError for a string longer than 256 characters, the name shown cut.
 */
import { describe, expect, it } from 'vitest'
import { createTable } from '../src/index.js'
import { manualClock } from '../src/testing.js'

describe('namespace(name) refusals', () => {
  it('too long is a RangeError giving the length; empty or not a string is a TypeError', async () => {
    const table = createTable<string>({ name: 'ns', clock: manualClock() })
    const long = (() => {
      try {
        table.namespace('n'.repeat(300))
      } catch (error) {
        return error
      }
    })()
    expect(long).toBeInstanceOf(RangeError)
    expect(long).toMatchObject({
      code: 'ECHOSTORE_BAD_ARGUMENT',
      message: `echostore: namespace(name) takes a non-empty string of at most 256 characters, got "${'n'.repeat(64)}…" (300 chars)`,
    })
    expect(() => table.namespace('')).toThrow(TypeError)
    expect(() => table.namespace('')).toThrow('echostore: namespace(name) takes a non-empty string of at most 256 characters, got ""')
    expect(() => table.namespace(7 as never)).toThrow(TypeError)
    expect(() => table.namespace('n'.repeat(256))).not.toThrow()
    await table.close()
  })
})
