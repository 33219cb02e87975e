/**
 * `registerTableMetrics` refuses a bad argument with a TypeError (`ECHOSTORE_BAD_ARGUMENT`) that
 * names the option, shows the value as every EchoStore message does (cut, never thrown on: a BigInt
 * prefix once threw JSON.stringify's own "Do not know how to serialize a BigInt") and says what it takes.
 * Unknown and null options are refused, as every other call's are.
 */
import * as promClient from 'prom-client'
import { describe, expect, it } from 'vitest'
import { createTable } from '../src/index.js'
import { registerTableMetrics } from '../src/prometheus.js'
import { manualClock } from '../src/testing.js'
import { refusal } from './support/refusal.js'

describe('registerTableMetrics refusals', () => {
  const table = createTable<string>({ name: 'm', clock: manualClock() })
  const registry = new promClient.Registry()

  it('an unknown option, a null one or options that are not an object are refused naming them; undefined takes the default', () => {
    expect(() => registerTableMetrics(promClient, table, { registry, lable: 'x' } as never)).toThrow(
      /registerTableMetrics\(promClient, table, options\): unknown option "lable" \(known: registry, prefix, label\)/,
    )
    expect(() => registerTableMetrics(promClient, table, { registry, prefix: null } as never)).toThrow(/option "prefix" is null: omit it/)
    expect(() => registerTableMetrics(promClient, table, null as never)).toThrow(/takes an options object, got null/)
    const unregister = registerTableMetrics(promClient, table, { registry, label: undefined })
    unregister()
  })

  it('a prefix of any type is shown, with the rule it breaks', () => {
    const rule = "must be a Prometheus metric name prefix (letters, digits, _ and :, not starting with a digit; '' for none)"
    for (const [prefix, shown] of [
      [10n, '10n'],
      ['9x', '"9x"'],
      ['bad prefix', '"bad prefix"'],
      [Symbol('p'), 'Symbol(p)'],
      ['-'.repeat(100), `"${'-'.repeat(64)}…" (100 chars)`],
    ] as const) {
      const error = refusal(() => registerTableMetrics(promClient, table, { registry, prefix: prefix as never }))
      expect(error).toBeInstanceOf(TypeError)
      expect(error).toMatchObject({ code: 'ECHOSTORE_BAD_ARGUMENT', message: `echostore: registerTableMetrics: option "prefix" ${rule}, got ${shown}` })
    }
  })

  it('a label, a registry, a table and the module are shown too', () => {
    expect(refusal(() => registerTableMetrics(promClient, table, { registry, label: 5 as never }))).toMatchObject({
      name: 'TypeError',
      message: `echostore: registerTableMetrics: option "label" must be a non-empty string (it defaults to the table's name), got 5`,
    })
    expect(refusal(() => registerTableMetrics(promClient, table, { registry: {} as never }))).toMatchObject({
      name: 'TypeError',
      message: 'echostore: registerTableMetrics: option "registry" must be a prom-client Registry (new promClient.Registry(), or leave it out for promClient.register), got an object',
    })
    expect(refusal(() => registerTableMetrics(promClient, 'm' as never, { registry }))).toMatchObject({
      message: 'echostore: registerTableMetrics: the second argument must be a table (with stats()), got "m"',
    })
    expect(refusal(() => registerTableMetrics(undefined as never, table, { registry }))).toMatchObject({
      message: "echostore: registerTableMetrics: pass the prom-client module (import * as promClient from 'prom-client') as the first argument, got undefined",
    })
    expect(registry.getMetricsAsArray()).toEqual([])
  })
})
