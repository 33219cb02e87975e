/**
 * One rule for every option of every call: `undefined` is the same as leaving the option out, `null`
 * is refused with a TypeError naming the option, and an unknown option is refused (a typo). Here for
 * the reads beside `fetch` (`get`, `fetchMany`, `getMany`), `localBus`, and `invalidateTags`'s undefined.
 */
import { describe, expect, it } from 'vitest'
import { createTable, localBus } from '../src/index.js'
import { manualClock } from '../src/testing.js'

const READ_OPTIONS = ['signal', 'timeout', 'softTimeout', 'forceRefresh'] as const

function table() {
  return createTable<string>({ clock: manualClock(), loader: (id) => `v ${id}` })
}

describe('the reads beside fetch', () => {
  it.each(READ_OPTIONS)('get, fetchMany and getMany refuse %s: null with a TypeError naming it, and take undefined as its default', async (option) => {
    const users = table()
    const batch = (ids: readonly string[]) => ids.map((id) => `b ${id}`)
    for (const [call, read] of [
      ['get', (options: object) => users.get('a', options as never)],
      ['fetchMany', (options: object) => users.fetchMany(['a'], batch, options as never)],
      ['getMany', (options: object) => users.getMany(['a'], options as never)],
    ] as const) {
      const refused = read({ [option]: null })
      await expect(refused, call).rejects.toBeInstanceOf(TypeError)
      await expect(refused, call).rejects.toThrow(new RegExp(`option "${option}" is null`))
      await expect(read({ [option]: undefined }), call).resolves.toBeDefined()
    }
    await users.close()
  })

  it('get, fetchMany and getMany refuse an unknown option, naming it, and load nothing', async () => {
    let loads = 0
    const users = createTable<string>({ clock: manualClock(), loader: (id) => (loads++, `v ${id}`) })
    const batch = (ids: readonly string[]) => (loads++, ids.map((id) => `b ${id}`))
    for (const refused of [users.get('a', { tiemout: 5 } as never), users.fetchMany(['a'], batch, { tiemout: 5 } as never), users.getMany(['a'], { tiemout: 5 } as never)]) {
      await expect(refused).rejects.toBeInstanceOf(TypeError)
      await expect(refused).rejects.toThrow(/unknown option "tiemout"/)
    }
    expect(loads).toBe(0)
    expect(users.size).toBe(0)
    await users.close()
  })
})

describe('localBus', () => {
  it('refuses onHandlerError: null with a TypeError naming it, and takes undefined as the default', async () => {
    expect(() => localBus({ onHandlerError: null } as never)).toThrow(TypeError)
    expect(() => localBus({ onHandlerError: null } as never)).toThrow(/localBus: option "onHandlerError" is null/)
    const bus = localBus({ onHandlerError: undefined })
    await bus.close()
  })
})

describe('invalidateTags', () => {
  it('takes version: undefined as its default', async () => {
    const users = createTable<string>({ clock: manualClock() })
    await users.fetch('a', (_id, { setTags }) => (setTags(['t']), 'v'))
    expect(await users.invalidateTags(['t'], { version: undefined })).toMatchObject({ applied: true })
    expect(users.peek('a')).toBeUndefined()
    await users.close()
  })
})
