/**
 * A loader's `setVersion(n)` and `setTtl(ms)`, and a batch loader's `setVersion(id, n)` and
 * `setTtl(id, ms)`, refuse a bad argument as every call does: a TypeError for what is not a number,
 * a RangeError for a number out of range, code `ECHOSTORE_BAD_ARGUMENT`, the value shown, the range
 * and what the number means; a batch loader's names the id (the caller's, in a namespace view).
 */
import { describe, expect, it } from 'vitest'
import { createTable } from '../src/index.js'
import { MAX_TTL, MAX_VERSION } from '../src/limits.js'
import { manualClock } from '../src/testing.js'

const VERSION_RULE = `setVersion takes an integer in [0, ${MAX_VERSION}]`
const VERSION_MEANS = '(a row version, or a time in ms such as updated_at)'
const TTL_RULE = `setTtl takes a number of ms in [0, ${MAX_TTL}]`

describe("a loader context's refusals", () => {
  it("a loader's setVersion: RangeError for a number out of range, TypeError for another type", async () => {
    const table = createTable<string>({ name: 'ctx', clock: manualClock() })
    for (const [bad, shown, Kind] of [
      [-1, '-1', RangeError],
      [1.5, '1.5', RangeError],
      [Number.NaN, 'NaN', RangeError],
      [MAX_VERSION + 1, String(MAX_VERSION + 1), RangeError],
      ['7', '"7"', TypeError],
    ] as const) {
      const error = await table.fetch(`k${shown}`, (_id, { setVersion }) => (setVersion(bad as number), 'v')).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(Kind)
      expect(error).toMatchObject({ code: 'ECHOSTORE_BAD_ARGUMENT', message: `echostore: ${VERSION_RULE} ${VERSION_MEANS}, got ${shown}` })
    }
    expect(table.stats()).toMatchObject({ fills: 0, size: 0 })
    await table.close()
  })

  it("a batch loader's setVersion(id, n) and setTtl(id, ms) name the id, the caller's in a namespace view", async () => {
    const table = createTable<string>({ name: 'ctx', clock: manualClock() })
    for (const reader of [table, table.namespace('acme')]) {
      const version = await reader.fetchMany(['x'], (ids, { setVersion }) => (setVersion('x', -1), ids.map(() => 'v'))).catch((e: unknown) => e)
      expect(version).toBeInstanceOf(RangeError)
      expect((version as Error).message).toBe(`echostore: ${VERSION_RULE} for id "x" ${VERSION_MEANS}, got -1`)
      const ttl = await reader.fetchMany(['y'], (ids, { setTtl }) => (setTtl('y', '5' as never), ids.map(() => 'v'))).catch((e: unknown) => e)
      expect(ttl).toBeInstanceOf(TypeError)
      expect((ttl as Error).message).toBe(`echostore: ${TTL_RULE} for id "y" (0: answer and store nothing), got "5"`)
    }
    const ttl = await table.fetch('z', (_id, { setTtl }) => (setTtl(-1), 'v')).catch((e: unknown) => e)
    expect(ttl).toBeInstanceOf(RangeError)
    expect((ttl as Error).message).toBe(`echostore: ${TTL_RULE} (0: answer and store nothing), got -1`)
    await table.close()
  })
})
