/**
 * What a caller hands the table cannot stop its owner: a genuine `AbortSignal` whose `aborted`
 * getter or `addEventListener` throws is a refused fetch (a `TypeError` naming the option, what was
 * thrown its `cause`), never a synchronous throw nor a dead owner; and an `inspect` observer that
 * throws is reported as a process warning, like a throwing event listener, while the table goes on.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { TableClosedError, createTable } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { latchedLoader, outcome, settle } from './support/latch.js'

type Row = { v: string }

const warnings: Error[] = []
const onWarning = (warning: Error) => warnings.push(warning)
beforeEach(() => {
  warnings.length = 0
  process.on('warning', onWarning)
})
afterEach(() => {
  process.off('warning', onWarning)
})

/** A genuine signal whose `name` member throws when used. */
function signalWithThrowing(name: 'aborted' | 'addEventListener'): AbortSignal {
  const signal = new AbortController().signal
  if (name === 'aborted')
    Object.defineProperty(signal, 'aborted', {
      get() {
        throw new Error('hostile aborted getter')
      },
    })
  else
    Object.defineProperty(signal, 'addEventListener', {
      value() {
        throw new Error('hostile addEventListener')
      },
    })
  return signal
}

describe('a signal whose members throw', () => {
  for (const member of ['aborted', 'addEventListener'] as const) {
    it(`(${member}) rejects that fetch with a TypeError naming the signal, and the table goes on`, async () => {
      const table = createTable<Row>({ sweepInterval: 1e9 })
      const origin = latchedLoader<Row>()
      const before = outcome(table.fetch('a', origin.loader)) // a flight in progress for the id
      await settle()
      let hostile: Promise<Row | undefined> | undefined
      expect(() => (hostile = table.fetch('a', origin.loader, { signal: signalWithThrowing(member) }))).not.toThrow()
      const refused = outcome(hostile!)
      await settle()
      expect(refused.state).toBe('rejected')
      expect(refused.error).toBeInstanceOf(TypeError)
      expect(String((refused.error as Error).message)).toMatch(/signal/)
      origin.only().resolve({ v: 'one' })
      await settle()
      expect(before.value).toEqual({ v: 'one' })
      const later = await table.fetch('b', () => ({ v: 'two' }))
      expect(later).toEqual({ v: 'two' })
      expect(await table.fetch('a', origin.loader)).toEqual({ v: 'one' })
      await table.close()
      await expect(table.fetch('c', () => ({ v: 'x' }))).rejects.toBeInstanceOf(TableClosedError)
    })
  }
})

describe('a signal whose addEventListener throws an error that cannot be shown', () => {
  for (const [name, make] of [
    ['a symbol message', () => Object.assign(new Error('x'), { message: Symbol('m') })],
    [
      'a message getter that throws',
      () =>
        Object.defineProperty(new Error('x'), 'message', {
          get() {
            throw new Error('no')
          },
        }),
    ],
  ] as const) {
    it(`(${name}) is still a refusal naming the signal, and the table goes on`, async () => {
      const table = createTable<string>({ clock: manualClock(0) })
      const origin = latchedLoader<string>()
      const signal = new AbortController().signal
      signal.addEventListener = () => {
        throw make()
      }
      const read = outcome(table.fetch('k', origin.loader, { signal }))
      await settle()
      expect(read.state).toBe('rejected')
      expect(read.error).toMatchObject({ code: 'ECHOSTORE_BAD_ARGUMENT' })
      expect(String((read.error as Error).message)).toMatch(/fetch\("k"\) option "signal" could not be used \(/)
      expect(origin.calls).toHaveLength(0) // refused before it could load
      expect(await table.fetch('j', () => 'w')).toBe('w')
      await table.close()
    })
  }
})

describe('an inspect observer that throws', () => {
  for (const form of ['a function', 'an observer object'] as const) {
    it(`(${form}) is reported as a process warning; fetches and close() still settle`, async () => {
      let throws = 1
      const inspect = () => {
        if (throws-- > 0) throw new Error('observer broke')
      }
      const table = createTable<Row>({ sweepInterval: 1e9, inspect: form === 'a function' ? inspect : { next: inspect } })
      const first = outcome(table.fetch('a', () => ({ v: 'one' })))
      await settle()
      await settle()
      expect(first.value).toEqual({ v: 'one' })
      expect(await table.fetch('b', () => ({ v: 'two' }))).toEqual({ v: 'two' })
      const closed = outcome(table.close())
      await settle()
      expect(closed.state).toBe('fulfilled')
      expect(warnings.some((w) => /inspect/.test(w.message))).toBe(true)
    })
  }
})

describe('the process warning of a throwing listener or inspector', () => {
  it('a throwing event listener is reported as an EchoStoreListenerWarning naming the event, and the fetch is answered', async () => {
    const table = createTable<Row>({ name: 'w', clock: manualClock() })
    table.events.on('fill', () => {
      throw new Error('listener broke')
    })
    expect(await table.fetch('a', () => ({ v: 'one' }))).toEqual({ v: 'one' })
    await settle()
    expect(warnings).toHaveLength(1)
    expect(warnings[0]!.name).toBe('EchoStoreListenerWarning')
    expect(warnings[0]!.message).toBe("echostore: a 'fill' event listener threw (listener broke); the table went on")
    expect(await table.fetch('a', () => ({ v: 'never' }))).toEqual({ v: 'one' }) // the fill was stored
    await table.close()
  })

  it('a throwing inspect observer is reported as an EchoStoreListenerWarning, and the fetch is answered', async () => {
    let throws = 1
    const table = createTable<Row>({
      clock: manualClock(),
      inspect: () => {
        if (throws-- > 0) throw new Error('observer broke')
      },
    })
    expect(await table.fetch('a', () => ({ v: 'one' }))).toEqual({ v: 'one' })
    await settle()
    expect(warnings).toHaveLength(1)
    expect(warnings[0]!.name).toBe('EchoStoreListenerWarning')
    expect(warnings[0]!.message).toBe('echostore: an inspect observer threw (observer broke); the table went on')
    await table.close()
  })
})
