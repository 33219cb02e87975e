import { describe, expect, it } from 'vitest'
import type { BusDelivery } from '../src/bus/bus.js'
import { localBus } from '../src/bus/local.js'
import { busContract, message, recorder } from './bus-contract.js'

describe('localBus: the bus contract', () => {
  // One in-process bus is one transport: both handles are the same object.
  busContract(async () => {
    const bus = localBus()
    return { a: bus, b: bus }
  })
})

describe('localBus', () => {
  it('delivers synchronously, in subscription order, before publish returns', () => {
    const bus = localBus()
    const order: string[] = []
    bus.subscribe(() => order.push('first'))
    bus.subscribe(() => order.push('second'))
    void bus.publish(message(1))
    order.push('after publish')
    expect(order).toEqual(['first', 'second', 'after publish'])
  })

  it('delivers a frozen copy holding only the known fields', async () => {
    const bus = localBus()
    const r = recorder()
    bus.subscribe(r.handler)
    const sent = { ...message(1), extra: 'dropped' }
    await bus.publish(sent)
    const delivery = r.deliveries[0] as Extract<BusDelivery, { type: 'message' }>
    expect(delivery.message).not.toBe(sent)
    expect(delivery.message).toEqual(message(1))
    expect(Object.isFrozen(delivery) && Object.isFrozen(delivery.message)).toBe(true)
  })

  it('reports a throwing handler to onHandlerError, and survives a throwing reporter', async () => {
    const reported: [unknown, BusDelivery][] = []
    const failure = new Error('handler failure')
    const bus = localBus({
      onHandlerError: (error, delivery) => {
        reported.push([error, delivery])
        throw new Error('reporter failure')
      },
    })
    const r = recorder()
    bus.subscribe(() => {
      throw failure
    })
    bus.subscribe(r.handler)
    await bus.publish(message(1))
    expect(reported).toEqual([[failure, { type: 'message', message: message(1) }]])
    expect(r.messages()).toEqual([message(1)])
  })

  it('delivers a message published by a handler at once, to every subscriber', async () => {
    const bus = localBus()
    const log: string[] = []
    bus.subscribe((d) => {
      if (d.type !== 'message' || d.message.kind === 'clear') return
      log.push(`A${d.message.version}`)
      if (d.message.version === 1) void bus.publish(message(2))
    })
    bus.subscribe((d) => d.type === 'message' && d.message.kind !== 'clear' && log.push(`B${d.message.version}`))
    await bus.publish(message(1))
    expect(log).toEqual(['A1', 'A2', 'B2', 'B1'])
  })

  it('applies an unsubscribe made during a delivery to that same delivery', async () => {
    const bus = localBus()
    const later = recorder()
    let unsubscribeLater = (): void => {}
    bus.subscribe(() => unsubscribeLater())
    unsubscribeLater = bus.subscribe(later.handler)
    await bus.publish(message(1))
    expect(later.deliveries).toEqual([])
  })

  it('stops a delivery in progress when a handler closes the bus', async () => {
    const bus = localBus()
    const later = recorder()
    bus.subscribe(() => void bus.close())
    bus.subscribe(later.handler)
    await bus.publish(message(1))
    expect(later.deliveries).toEqual([])
  })

  it('refuses a non-function handler or reporter, null options and an unknown option', () => {
    expect(() => localBus({ onHandlerError: 1 as never })).toThrow(/onHandlerError/)
    // Options are read as every call's are: null and unknown keys are refused, naming them.
    expect(() => localBus(null as never)).toThrow(expect.objectContaining({ name: 'TypeError', code: 'ECHOSTORE_BAD_ARGUMENT', message: 'echostore: localBus takes an options object, got null' }))
    expect(() => localBus({ onHandlerErorr: () => {} } as never)).toThrow('echostore: localBus: unknown option "onHandlerErorr" (known: onHandlerError)')
    expect(() => localBus().subscribe('nope' as never)).toThrow(/handler/)
  })
})
