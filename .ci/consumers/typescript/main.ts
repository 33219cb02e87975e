/**
 * A strict TypeScript project using EchoStore's published types (checked with skipLibCheck off,
 * exactOptionalPropertyTypes, noUncheckedIndexedAccess and noPropertyAccessFromIndexSignature):
 * compiled under NodeNext and under Bundler resolution, and run.
 */
import { type Id, type Stats, type TableEvents, EchoStoreError, Table, TableClosedError, createTable, localBus, memoryL2 } from 'echostore'
import { type PromClient, type PromMetricConfig, registerTableMetrics } from 'echostore/prometheus'
import { ChaosError, chaosL2, manualClock } from 'echostore/testing'
import { MAX_TTL, DEFAULT_L2_TIMEOUT } from 'echostore/limits'
import { type L2Store, jsonCodec, parseCoherenceMessage } from 'echostore/store'

const consumer = process.argv[2] ?? 'typescript'
const fail = (what: string): never => {
  throw new Error(`${consumer}: ${what}`)
}

interface EmojiSet {
  id: Id
  emoji: string[]
}

// The store authors' and limits entries: a store typed against the contract, the wire parser, the bounds.
const store: L2Store = memoryL2()
if (!(MAX_TTL > 0 && DEFAULT_L2_TIMEOUT > 0) || typeof store.get !== 'function') fail('echostore/limits or echostore/store exported nothing usable')
if (parseCoherenceMessage({}).ok || jsonCodec.decode(Buffer.from(jsonCodec.encode({ a: 1 }))) === undefined) fail('echostore/store: the wire parser or the codec misbehaved')
await store.close()

// The core entry: a herd on one cold id, a change, and the error after close.
const bus = localBus()
const sets = createTable<EmojiSet>({ name: 'emoji_sets', ttl: 60_000, jitter: 0.2, l2: memoryL2(), bus })
const fills: TableEvents['fill'][] = []
sets.events.on('fill', (event) => fills.push(event))
let loads = 0
const answers = await Promise.all(
  Array.from({ length: 100 }, () =>
    sets.fetch('party', async (id, { signal }) => {
      loads++
      signal.throwIfAborted()
      return { id, emoji: ['🎉'] }
    }),
  ),
)
const first: EmojiSet | undefined = answers[0]
const stats: Stats = Table.stats(sets)
if (loads !== 1 || stats.loads !== 1 || fills.length !== 1) fail(`a herd of 100 concurrent fetches of one cold id cost ${loads} loader calls, not 1`)
if (first === undefined || !answers.every((answer) => answer === first)) fail('some callers of the herd did not get the one load’s answer')
const change = await sets.put('party', { id: 'party', emoji: ['🥳'] }, { version: 2 })
if (!change.applied || change.l2 !== 'written' || !change.broadcast) fail(`put answered ${JSON.stringify(change)}`)

// The prometheus entry, through a stand-in for prom-client that records the metric names it is given.
const names: string[] = []
class Metric {
  constructor(config: PromMetricConfig) {
    names.push(config.name)
  }
  reset(): void {}
  inc(): void {}
  set(): void {}
}
const promClient: PromClient = { Counter: Metric, Gauge: Metric, register: { registerMetric: () => {}, removeSingleMetric: () => {} } }
const unregister = registerTableMetrics(promClient, sets)
if (!names.includes('echostore_loads_total')) fail(`registerTableMetrics registered ${names.join(', ')}`)
unregister()

await sets.close()
await bus.close()
const refused: unknown = await sets
  .fetch('party', () => ({ id: 'party', emoji: [] }), { timeout: 100 })
  .then(
    () => undefined,
    (error: unknown) => error,
  )
if (!(refused instanceof TableClosedError && refused instanceof EchoStoreError)) fail('a fetch after close did not reject with TableClosedError')

// The testing entry: an L2 that fails on demand, on a clock that moves only when told.
const clock = manualClock(0)
const flaky = chaosL2(memoryL2({ clock }), clock)
flaky.fail('get', { kind: 'throw', error: new ChaosError('get') })
const tested = createTable<string>({ name: 'tested', clock, l2: flaky })
const value = await tested.fetch('id', () => 'from the loader')
if (value !== 'from the loader' || tested.stats().l2_errors !== 1) fail(`a failing L2 read answered ${String(value)}, l2_errors ${tested.stats().l2_errors}`)
flaky.heal()
await tested.close()

console.log(`pass ${consumer}: a herd of 100 concurrent fetches of one cold id cost 1 loader call; the prometheus and testing entries work`)
