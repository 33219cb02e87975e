/**
 * A loader's `setTags(tags)`: "at most 64 non-empty strings"; "A bad argument to any of them throws
 * a TypeError / RangeError inside the loader". 64 tags are taken; 65, or an empty tag, throw inside
 * the loader (the fetch rejects with it, nothing is stored); the same for a batch loader's setTags.
 */
import { describe, expect, it } from 'vitest'
import { type Id, type LoaderContext, createTable } from '../src/index.js'
import { manualClock } from '../src/testing.js'

const tags = (n: number) => Array.from({ length: n }, (_, i) => `t${i}`)

describe('setTags inside a loader', () => {
  it('takes 64 tags; 65 or an empty one throw inside the loader, and the answer is not stored', async () => {
    const table = createTable<string, Id>({ clock: manualClock() })
    expect(await table.fetch('ok', (_id, context: LoaderContext) => (context.setTags(tags(64)), 'v'))).toBe('v')
    expect(table.has('ok')).toBe(true)
    let thrown: unknown
    const tagged = (list: string[]) => (_id: Id, context: LoaderContext) => {
      try {
        context.setTags(list)
      } catch (error) {
        thrown = error
        throw error
      }
      return 'never stored'
    }
    await expect(table.fetch('many', tagged(tags(65)))).rejects.toThrow(/at most 64 tags/)
    expect(thrown).toBeInstanceOf(RangeError)
    await expect(table.fetch('empty', tagged(['fine', '']))).rejects.toThrow(/tags\[1\] must be a non-empty string/)
    expect(thrown).toBeInstanceOf(TypeError)
    expect(table.has('many')).toBe(false)
    expect(table.has('empty')).toBe(false)
    await table.invalidateTags(['t63'])
    expect(table.has('ok')).toBe(false) // the 64th tag was kept
    await table.close()
  })

  it('in a batch loader: 64 tags for an id are taken, 65 throw inside it', async () => {
    const table = createTable<string, Id>({ clock: manualClock() })
    const answers = await table.fetchMany(['a', 'b'], (ids, context) => {
      context.setTags('a', tags(64))
      expect(() => context.setTags('b', tags(65))).toThrow(RangeError)
      expect(() => context.setTags('b', [''])).toThrow(TypeError)
      return ids.map((id) => String(id).toUpperCase())
    })
    expect(answers).toEqual(['A', 'B'])
    await table.invalidateTags(['t63'])
    expect(table.has('a')).toBe(false)
    expect(table.has('b')).toBe(true)
    await table.close()
  })
})
