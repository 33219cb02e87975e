/**
 * The contract every coherence bus meets, run against each transport by its own spec file.
 * Deliveries are awaited with latches that resolve inside the handler, never with sleeps.
 */
import { afterEach, beforeEach, expect, it } from 'vitest'
import type { Bus, BusDelivery, ChangeMessage, CoherenceMessage } from '../src/bus/bus.js'
import { MAX_WIRE_BYTES } from '../src/bus/message.js'

/** Two handles on one transport (the same object for an in-process bus), both listening. */
export interface BusFixture {
  a: Bus
  b: Bus
  /** Publishes a raw payload on the transport, bypassing validation; absent without a wire. */
  raw?: (payload: string | Buffer) => Promise<void>
  /** Connections the fixture's buses hold open now; absent when the transport holds none. */
  connections?: () => Promise<number>
  /** Releases what the fixture opened besides the buses (the buses are closed by the suite). */
  dispose?: () => Promise<void>
}

/** Records deliveries and lets a test await a condition on them. */
export interface Recorder {
  readonly deliveries: BusDelivery[]
  readonly handler: (delivery: BusDelivery) => void
  /** Resolves as soon as `done(deliveries)` holds (checked now and on each delivery). */
  until(done: (deliveries: BusDelivery[]) => boolean): Promise<void>
  /** The messages among the deliveries. */
  messages(): CoherenceMessage[]
}

/** A fresh recorder. */
export function recorder(): Recorder {
  const deliveries: BusDelivery[] = []
  let waiters: { done: (d: BusDelivery[]) => boolean; resolve: () => void }[] = []
  const check = (): void => {
    waiters = waiters.filter((w) => {
      if (!w.done(deliveries)) return true
      w.resolve()
      return false
    })
  }
  return {
    deliveries,
    handler: (delivery) => {
      deliveries.push(delivery)
      check()
    },
    until: (done) =>
      new Promise<void>((resolve) => {
        waiters.push({ done, resolve })
        check()
      }),
    messages: () => deliveries.flatMap((d) => (d.type === 'message' ? [d.message] : [])),
  }
}

/** A valid message; `n` makes it distinct. */
export function message(n: number, patch: Partial<ChangeMessage> = {}): ChangeMessage {
  return { table: 'emoji_sets', id: `id-${n}`, version: n, kind: n % 2 === 0 ? 'put' : 'invalidate', origin: 'spec', ...patch }
}

const countMessages = (n: number) => (ds: BusDelivery[]) => ds.filter((d) => d.type === 'message').length >= n
const hasVersion = (version: number) => (ds: BusDelivery[]) => ds.some((d) => d.type === 'message' && d.message.kind !== 'clear' && d.message.version === version)

const valid = { table: 't', id: 'x', version: 1, kind: 'put', origin: 'o' }
const json = (value: unknown): string => JSON.stringify(value)

/** Payloads a bus must report as `invalid` (and never as a message), with what each breaks. */
export const MALFORMED_PAYLOADS: readonly (readonly [string, string | Buffer])[] = [
  ['not JSON', 'not json {'],
  ['empty payload', ''],
  ['JSON null', 'null'],
  ['JSON array', json([valid])],
  ['JSON number', '42'],
  ['JSON string', json('put')],
  ['empty object', '{}'],
  ['missing table', json({ ...valid, table: undefined })],
  ['missing id', json({ ...valid, id: undefined })],
  ['missing version', json({ ...valid, version: undefined })],
  ['missing kind', json({ ...valid, kind: undefined })],
  ['missing origin', json({ ...valid, origin: undefined })],
  ['table not a string', json({ ...valid, table: 1 })],
  ['empty table', json({ ...valid, table: '' })],
  ['id boolean', json({ ...valid, id: true })],
  ['id null', json({ ...valid, id: null })],
  ['id object', json({ ...valid, id: { a: 1 } })],
  ['id overflows to Infinity', '{"table":"t","id":1e999,"version":1,"kind":"put","origin":"o"}'],
  ['version a string', json({ ...valid, version: '1' })],
  ['version negative', json({ ...valid, version: -1 })],
  ['version overflows to Infinity', '{"table":"t","id":"x","version":1e999,"kind":"put","origin":"o"}'],
  ['kind unknown', json({ ...valid, kind: 'delete' })],
  ['empty origin', json({ ...valid, origin: '' })],
  ['__proto__ key', '{"__proto__":{"polluted":"yes"},"table":"t","id":"x","version":1,"kind":"put","origin":"o"}'],
  ['constructor key', json({ ...valid, constructor: { prototype: { polluted: 'yes' } } })],
  ['prototype key', json({ ...valid, prototype: { polluted: 'yes' } })],
  ['payload over the size limit', json({ ...valid, extra: 'x'.repeat(MAX_WIRE_BYTES) })],
  ['invalid UTF-8', Buffer.from([0x7b, 0xff, 0xfe, 0x7d])],
]

/** Runs the bus contract; `setup` opens a fresh fixture for each test. */
export function busContract(setup: () => Promise<BusFixture>): void {
  let fx: BusFixture

  beforeEach(async () => {
    fx = await setup()
  })
  afterEach(async () => {
    await fx.a.close()
    await fx.b.close()
    await fx.dispose?.()
  })

  it('delivers a published message to every subscriber, on both instances', async () => {
    const [a1, b1, b2] = [recorder(), recorder(), recorder()]
    fx.a.subscribe(a1.handler)
    fx.b.subscribe(b1.handler)
    fx.b.subscribe(b2.handler)

    await fx.a.publish(message(1))
    await fx.b.publish(message(2, { id: 7 }))
    await Promise.all([a1, b1, b2].map((r) => r.until(countMessages(2))))

    for (const r of [a1, b1, b2]) {
      expect(r.messages()).toEqual([message(1), message(2, { id: 7 })])
    }
  })

  it('carries a clear of a whole table, with only its three fields', async () => {
    const r = recorder()
    fx.b.subscribe(r.handler)
    const clear: CoherenceMessage = { table: 'emoji_sets', kind: 'clear', origin: 'spec' }
    await fx.a.publish({ ...clear, id: 'ignored', version: 3 } as CoherenceMessage)
    await r.until(countMessages(1))
    expect(r.messages()).toEqual([clear])
  })

  it('keeps the publish order of one instance', async () => {
    const r = recorder()
    fx.b.subscribe(r.handler)
    const sent = Array.from({ length: 20 }, (_, i) => message(i))
    await Promise.all(sent.map((m) => fx.a.publish(m)))
    await r.until(countMessages(sent.length))
    expect(r.messages()).toEqual(sent)
  })

  it('stops delivering to a handler once it unsubscribes', async () => {
    const [gone, stays] = [recorder(), recorder()]
    const unsubscribe = fx.b.subscribe(gone.handler)
    fx.b.subscribe(stays.handler)

    await fx.a.publish(message(1))
    await Promise.all([gone.until(countMessages(1)), stays.until(countMessages(1))])
    unsubscribe()
    unsubscribe() // idempotent
    await fx.a.publish(message(2))
    await stays.until(hasVersion(2))

    expect(gone.messages()).toEqual([message(1)])
    expect(stays.messages()).toEqual([message(1), message(2)])
  })

  it('gives two subscriptions of one function two deliveries, and removes them one by one', async () => {
    const r = recorder()
    const first = fx.b.subscribe(r.handler)
    fx.b.subscribe(r.handler)
    await fx.a.publish(message(1))
    await r.until(countMessages(2))
    first()
    await fx.a.publish(message(2))
    await r.until(hasVersion(2))
    expect(r.messages().map((m) => (m.kind === 'clear' ? m.kind : m.version))).toEqual([1, 1, 2])
  })

  it('keeps delivering to the others when a handler throws, and publish still resolves', async () => {
    const [before, after] = [recorder(), recorder()]
    fx.b.subscribe(before.handler)
    fx.b.subscribe(() => {
      throw new Error('handler failure')
    })
    fx.b.subscribe(after.handler)

    await expect(fx.a.publish(message(1))).resolves.toBeUndefined()
    await fx.a.publish(message(2))
    await Promise.all([before.until(countMessages(2)), after.until(countMessages(2))])
    expect(after.messages()).toEqual([message(1), message(2)])
  })

  it('does not let one handler alter what the others see', async () => {
    const seen = recorder()
    const tampering: unknown[] = []
    fx.b.subscribe((delivery) => {
      try {
        if (delivery.type === 'message') (delivery.message as { version: number }).version = 999
      } catch (error) {
        tampering.push(error)
      }
    })
    fx.b.subscribe(seen.handler)
    const sent = message(1)
    await fx.a.publish(sent)
    await seen.until(countMessages(1))

    expect(seen.messages()).toEqual([message(1)])
    expect(tampering).toHaveLength(1) // the delivery is frozen
    expect(sent).toEqual(message(1)) // and the publisher's object is not the one delivered
  })

  it('refuses to publish a malformed message and delivers nothing for it', async () => {
    const r = recorder()
    fx.b.subscribe(r.handler)
    const bad: unknown[] = [{ ...message(1), version: -1 }, { ...message(1), kind: 'delete' }, { ...message(1), id: Number.NaN }, { ...message(1), table: '' }, null]
    for (const m of bad) {
      await expect(fx.a.publish(m as CoherenceMessage)).rejects.toThrow(TypeError)
    }
    await fx.a.publish(message(2))
    await r.until(countMessages(1))
    expect(r.deliveries).toEqual([{ type: 'message', message: message(2) }])
  })

  it('reports malformed wire payloads as invalid, in order, and pollutes no prototype', async (ctx) => {
    if (fx.raw === undefined) return ctx.skip()
    const r = recorder()
    fx.b.subscribe(r.handler)

    for (const [, payload] of MALFORMED_PAYLOADS) await fx.raw(payload)
    await fx.raw(JSON.stringify({ ...message(1), unknownField: 'ignored' }))
    await r.until((ds) => ds.length === MALFORMED_PAYLOADS.length + 1)

    const invalid = r.deliveries.slice(0, -1)
    expect(
      invalid.every((d) => d.type === 'invalid' && d.reason.length > 0),
      JSON.stringify(invalid),
    ).toBe(true)
    expect(r.deliveries.at(-1)).toEqual({ type: 'message', message: message(1) })
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    expect(Object.getOwnPropertyNames(Object.prototype)).not.toContain('polluted')
  })

  it('closes idempotently, then refuses publish and ignores subscribe', async () => {
    await fx.a.close()
    await fx.a.close()
    await expect(fx.a.publish(message(1))).rejects.toMatchObject({ code: 'ECHOSTORE_BUS_CLOSED' })
    const unsubscribe = fx.a.subscribe(() => {
      throw new Error('must not be called')
    })
    expect(unsubscribe).toBeTypeOf('function')
    unsubscribe()
  })

  it('releases every connection it opened on close', async (ctx) => {
    if (fx.connections === undefined) return ctx.skip()
    expect(await fx.connections()).toBeGreaterThan(0)
    await Promise.all([fx.a.close(), fx.a.close(), fx.b.close()])
    expect(await fx.connections()).toBe(0)
  })
}
