import { afterEach, describe, expect, it } from 'vitest'
import { manualClock } from '../src/core/clock.js'
import { chaosL2, type ChaosL2 } from '../src/l2/chaos.js'
import { memoryL2 } from '../src/l2/memory.js'
import { L2CorruptEntryError } from '../src/core/errors.js'
import type { L2Write } from '../src/l2/store.js'
import { refusal } from './support/refusal.js'

const entry = (value: unknown, version = 1): L2Write => ({ kind: 'value', value, version, ttl: 60_000 })

/** Whether a promise has settled, after letting every pending microtask run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false
  promise.then(
    () => (done = true),
    () => (done = true),
  )
  for (let i = 0; i < 10; i++) await Promise.resolve()
  return done
}

describe('chaosL2', () => {
  let chaos: ChaosL2 | undefined
  afterEach(async () => {
    chaos?.heal()
    expect(chaos?.stalled ?? 0).toBe(0)
    await chaos?.close()
    chaos = undefined
  })

  function make() {
    const clock = manualClock()
    const inner = memoryL2({ clock })
    chaos = chaosL2(inner, clock)
    return { clock, inner, chaos }
  }

  it('passes every call through to the store until told otherwise, and counts calls', async () => {
    const { chaos } = make()
    expect(await chaos.set('t', 1, entry('one'))).toBe(true)
    expect((await chaos.get('t', 1))?.value).toBe('one')
    expect(await chaos.nextVersion('t', 1, 0)).toBe(2)
    await chaos.clear('t')
    expect(await chaos.get('t', 1)).toBeUndefined()
    expect(await chaos.leases!.acquire('t', 1, 'me', 1_000)).toBe(true)
    expect(chaos.calls).toEqual({ get: 2, set: 1, nextVersion: 1, clear: 1, lease: 1 })
  })

  it('throws on demand: a rejection by default, a synchronous throw when asked, a given error', async () => {
    const { chaos } = make()
    chaos.fail('get', { kind: 'throw' })
    await expect(chaos.get('t', 1)).rejects.toThrow('echostore: chaosL2: injected failure of L2 get')
    const boom = new Error('boom')
    chaos.fail('set', { kind: 'throw', error: boom, sync: true })
    expect(() => chaos.set('t', 1, entry('x'))).toThrow(boom)
    expect(chaos.calls.set).toBe(1)
    chaos.heal()
    expect(await chaos.set('t', 1, entry('x'))).toBe(true)
  })

  it('faults only `times` calls when asked, then heals that op by itself', async () => {
    const { chaos } = make()
    chaos.fail('get', { kind: 'throw' }, { times: 2 })
    await expect(chaos.get('t', 1)).rejects.toThrow()
    await expect(chaos.get('t', 1)).rejects.toThrow()
    expect(await chaos.get('t', 1)).toBeUndefined()
    expect(chaos.calls.get).toBe(3)
  })

  it('returns garbage on demand: get rejects with L2CorruptEntryError', async () => {
    const { chaos } = make()
    await chaos.set('t', 'g', entry('fine'))
    chaos.fail('get', { kind: 'corrupt' })
    await expect(chaos.get('t', 'g')).rejects.toBeInstanceOf(L2CorruptEntryError)
    await expect(chaos.get('t', 'g')).rejects.toMatchObject({ code: 'ECHOSTORE_L2_CORRUPT' })
    expect(() => chaos.fail('set', { kind: 'corrupt' })).toThrow(TypeError)
  })

  it('stalls until heal(), and only then reaches the store', async () => {
    const { chaos, inner } = make()
    chaos.fail('set', { kind: 'stall' })
    const write = chaos.set('t', 's', entry('late'))
    expect(await settled(write)).toBe(false)
    expect(chaos.stalled).toBe(1)
    expect(await inner.get('t', 's')).toBeUndefined()
    chaos.heal()
    expect(await write).toBe(true)
    expect(chaos.stalled).toBe(0)
    expect((await inner.get('t', 's'))?.value).toBe('late')
  })

  it('stalls for ms on its clock, then settles as the store does', async () => {
    const { chaos, clock } = make()
    await chaos.set('t', 'm', entry('slow'))
    chaos.fail('get', { kind: 'stall', ms: 50 })
    const read = chaos.get('t', 'm')
    clock.advance(49)
    expect(await settled(read)).toBe(false)
    clock.advance(1)
    expect((await read)?.value).toBe('slow')
    expect(chaos.stalled).toBe(0)
    expect(clock.pending()).toBe(0)
  })

  it('heal() releases timed stalls early and clears their timers', async () => {
    const { chaos, clock } = make()
    chaos.fail('all', { kind: 'stall', ms: 1_000 })
    const calls = [chaos.get('t', 1), chaos.nextVersion('t', 1, 0), chaos.set('t', 2, entry('two'))]
    expect(chaos.stalled).toBe(3)
    expect(clock.pending()).toBe(3)
    chaos.heal()
    expect(await Promise.all(calls)).toEqual([undefined, 1, true])
    expect(clock.pending()).toBe(0)
  })

  it('a stalled call settles with the store’s rejection when the store fails by then', async () => {
    const { chaos, inner } = make()
    chaos.fail('get', { kind: 'stall' })
    const read = chaos.get('t', 1)
    await inner.close()
    chaos.heal()
    await expect(read).rejects.toThrow(/close/)
  })

  it("exposes the wrapped store's timeout", () => {
    const inner = memoryL2()
    expect(chaosL2(inner).timeout).toBeUndefined()
    expect(chaosL2({ ...inner, timeout: 30 }).timeout).toBe(30)
  })

  it('validates its controls', () => {
    const { chaos } = make()
    expect(() => chaos.fail('put' as never, { kind: 'throw' })).toThrow(TypeError)
    expect(() => chaos.fail('get', { kind: 'stall', ms: -1 })).toThrow(RangeError)
    expect(() => chaos.fail('get', { kind: 'throw' }, { times: 0 })).toThrow(RangeError)
  })

  it('refuses at once what it cannot wrap, naming what was given and what a store is', () => {
    for (const notAStore of [5, null, undefined, {}, { get() {}, set() {} }, 'redis://127.0.0.1']) {
      const error = refusal(() => chaosL2(notAStore as never))
      expect(error).toBeInstanceOf(TypeError)
      expect(error.code).toBe('ECHOSTORE_BAD_ARGUMENT')
      expect(error.message).toMatch(/^echostore: chaosL2: the store to wrap must be an L2Store \(get, set, nextVersion, clear, close\), such as memoryL2\(\) or redisL2\(\{ url \}\), got /)
    }
    expect(refusal(() => chaosL2(5 as never)).message).toMatch(/got 5$/)
    const unfitClock = refusal(() => chaosL2(memoryL2(), { now: () => 0 } as never))
    expect(unfitClock).toBeInstanceOf(TypeError)
    expect(unfitClock.message).toContain('chaosL2: the clock must be an object with now(), setTimeout(fn, ms) and clearTimeout(handle)')
    const clockBehind = refusal(() => chaosL2(memoryL2(), { now: () => -1, setTimeout, clearTimeout } as never))
    expect(clockBehind).toBeInstanceOf(RangeError)
    expect(clockBehind.message).toContain('chaosL2: the clock must have a now() that reads a finite number of ms ≥ 0 (it read -1)')
  })
})
