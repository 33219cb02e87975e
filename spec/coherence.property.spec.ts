/**
 * Out-of-order coherence, as a property: for any multiset of versioned put/invalidate messages
 * (ids from a small pool, duplicates included) delivered in any order to a table over a localBus,
 *
 * - every message is counted exactly once, and exactly as a model says: applied iff its version is
 *   at or above the version the table held for the id at that moment (an equal version from another
 *   origin may be another change: dropping the row is always safe), where a message about an id with
 *   no row and no running flight leaves nothing held (see `model`)
 *   (`coh_applied + coh_stale === delivered`, and each of the two equals the model's count);
 * - messages about an id with no row and no running flight leave no row behind (they must not use
 *   up capacity): once the last message is in, the table's size is exactly the model's;
 * - once the last message is in, the table holds exactly the highest version seen for each id:
 *   a probe message carrying that version − 1 is counted stale, and one carrying that version is
 *   applied (the held version is observed through behaviour only);
 * - no read that starts after the last message returns a value older than that version.
 *
 * Values are named after their version (`v7` is the value of version 7), so "older" is visible in
 * the value itself. The source (the loader used after the messages) answers the value of the
 * highest version and reports it through `context.setVersion`.
 *
 * Before the messages, each id of the receiver is in one of four states: no row, a row loaded at a
 * known version, a flight in progress whose loader read the source before any message (it answers
 * `v0` once every message is in, so a fenced flight that stored its answer would show up as a stale
 * read), or a put of a drawn version whose write is in L2 and whose answer from L2 waits until every
 * message is in (a fenced put that stored its value would show up as a stale read). The receiver runs with the coalescing gate on or off (an unregistered flight is not
 * in the flights map: it is fenced through the owner's `solo` set, and its id's tombstone and L2's
 * version guard keep its answer out too).
 *
 * Messages arrive either from a second table instance of the same name (`put(id, v, { version })`
 * / `invalidate(id, { version })`, which write the shared L2, version-guarded, and broadcast even
 * when refused), or raw on the bus with a foreign origin.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { type ChangeResult, type LoaderContext, type Table, createTable, localBus, memoryL2 } from '../src/index.js'
import type { L2Store } from '../src/store.js'
import { manualClock } from '../src/testing.js'
import { latchedLoader, settle } from './support/latch.js'

const NAME = 'catalog'
const IDS = ['a', 'b', 'c'] as const
type Id = (typeof IDS)[number]
type Kind = 'put' | 'invalidate'

interface Message {
  id: Id
  version: number
  kind: Kind
}

/** What the receiver holds for an id before the messages. */
type Seed = { type: 'none' } | { type: 'row'; version: number } | { type: 'flight' } | { type: 'put'; version: number }

interface Scenario {
  mode: 'publisher' | 'raw'
  coalesce: boolean
  seeds: Record<Id, Seed>
  delivered: Message[]
}

const valueAt = (version: number): string => `v${version}`

const messageArb: fc.Arbitrary<Message> = fc.record({
  id: fc.constantFrom(...IDS),
  version: fc.nat({ max: 8 }),
  kind: fc.constantFrom<Kind>('put', 'invalidate'),
})

const seedArb: fc.Arbitrary<Seed> = fc.oneof(
  fc.constant<Seed>({ type: 'none' }),
  fc.nat({ max: 5 }).map((version): Seed => ({ type: 'row', version })),
  fc.constant<Seed>({ type: 'flight' }),
  fc.nat({ max: 8 }).map((version): Seed => ({ type: 'put', version })),
)

/** A multiset of messages, some repeated, then delivered in any order (a permutation of it). */
const deliveredArb: fc.Arbitrary<Message[]> = fc
  .tuple(fc.array(messageArb, { minLength: 1, maxLength: 24 }), fc.array(fc.nat(), { maxLength: 8 }))
  .map(([base, repeats]) => [...base, ...repeats.map((i) => base[i % base.length]!)])
  .chain((all) => fc.shuffledSubarray(all, { minLength: all.length, maxLength: all.length }))

const scenarioArb: fc.Arbitrary<Scenario> = fc.record({
  mode: fc.constantFrom<Scenario['mode']>('publisher', 'raw'),
  coalesce: fc.boolean(),
  seeds: fc.record({ a: seedArb, b: seedArb, c: seedArb }),
  delivered: deliveredArb,
})

/**
 * The model: which messages apply, and the version (and so the value) each id must end at.
 *
 * The receiver holds, per id, the version of its row (or tombstone) or of its joinable flight;
 * nothing (-1) when it has neither. A message is applied iff its version is above what is held.
 * An applied message leaves a tombstone at its version only when the id has a row or a running
 * flight (joinable or not): a message about an id with neither leaves nothing held, so it does not
 * use up capacity, and a later message about that id (even an older or equal one) is applied too.
 * Here an id has a row, a running flight or a put in progress throughout the messages iff its seed
 * is not `none` (the early flights answer, and the early puts hear from L2, only after the last
 * message). A put in progress holds no version (-1); once it hears from L2 it is applied iff its
 * version is above every message of its id (an equal one may be another change).
 */
function model(scenario: Scenario) {
  const held = new Map<Id, number>()
  const base = new Map<Id, number>()
  for (const id of IDS) {
    const seed = scenario.seeds[id]
    // A joinable flight holds its starting version (0: there was no row); an unregistered one holds nothing.
    held.set(id, seed.type === 'row' ? seed.version : seed.type === 'flight' && scenario.coalesce ? 0 : -1)
    base.set(id, seed.type === 'row' ? seed.version : 0)
  }
  const tombstoned = new Set<Id>()
  let applied = 0
  let stale = 0
  const highest = new Map(base)
  const heard = new Map<Id, number>()
  for (const m of scenario.delivered) {
    heard.set(m.id, Math.max(heard.get(m.id) ?? -1, m.version))
    if (m.version >= held.get(m.id)!) {
      const seed = scenario.seeds[m.id].type
      if (seed !== 'none') {
        held.set(m.id, m.version) // a tombstone at m.version
        tombstoned.add(m.id)
      }
      applied++
    } else {
      stale++
    }
    highest.set(m.id, Math.max(highest.get(m.id)!, m.version))
  }
  // Rows (values or tombstones) once every message is in: the seeded rows, and a tombstone for each
  // flight seed that an applied message reached. Messages about the other ids left nothing.
  const rows = IDS.filter((id) => scenario.seeds[id].type === 'row' || tombstoned.has(id)).length
  // The early puts, once they heard from L2: one above every message of its id is the highest.
  const putsApplied = new Set<Id>()
  for (const id of IDS) {
    const seed = scenario.seeds[id]
    if (seed.type !== 'put' || seed.version <= (heard.get(id) ?? -1)) continue
    putsApplied.add(id)
    highest.set(id, seed.version)
  }
  return { applied, stale, highest, rows, putsApplied }
}

async function run(scenario: Scenario): Promise<void> {
  const clock = manualClock(0)
  const l2 = memoryL2({ clock })
  const bus = localBus()
  const options = { name: NAME, ttl: 1e9, jitter: 0, sweepInterval: 1e9, clock, l2, bus }
  // The receiver's L2 writes reach L2 at once; while not `released`, their answers wait (its early puts are in progress throughout the messages).
  const heldAnswers: (() => void)[] = []
  let released = true
  const receiverL2: L2Store = {
    get: (t, i) => l2.get(t, i),
    set: (t, i, entry) => {
      const written = l2.set(t, i, entry)
      return released ? written : new Promise<boolean>((resolve, reject) => heldAnswers.push(() => void written.then(resolve, reject)))
    },
    nextVersion: (t, i, floor) => l2.nextVersion(t, i, floor),
    clear: (t) => l2.clear(t),
    close: () => l2.close(),
  }
  const receiver: Table<string | undefined> = createTable<string | undefined>({ ...options, l2: receiverL2, coalesce: scenario.coalesce })
  const publisher: Table<string | undefined> = createTable<string | undefined>(options)
  const expected = model(scenario)
  const raw = (id: Id, version: number, kind: Kind = 'invalidate') => bus.publish({ table: NAME, id, version, kind, origin: 'elsewhere' })
  const early = latchedLoader<string>()
  try {
    // ---- the receiver's state before the messages ----
    const earlyAnswers = new Map<Id, Promise<string | undefined>>()
    const earlyPuts = new Map<Id, Promise<ChangeResult>>()
    for (const id of IDS) {
      const seed = scenario.seeds[id]
      if (seed.type === 'row') {
        const loaded = await receiver.fetch(id, (_id, context: LoaderContext) => {
          context.setVersion(seed.version)
          return valueAt(seed.version)
        })
        expect(loaded).toBe(valueAt(seed.version))
      } else if (seed.type === 'flight') {
        earlyAnswers.set(id, receiver.fetch(id, early.loader))
      }
    }
    released = false
    for (const id of IDS) {
      const seed = scenario.seeds[id]
      if (seed.type === 'put') earlyPuts.set(id, receiver.put(id, valueAt(seed.version), { version: seed.version }))
    }
    await settle()
    expect(early.calls).toHaveLength(earlyAnswers.size) // every early flight is at its loader
    expect(heldAnswers).toHaveLength(earlyPuts.size) // every early put is in L2, waiting for the answer

    // ---- the messages, in the drawn order ----
    for (const m of scenario.delivered) {
      if (scenario.mode === 'raw') await raw(m.id, m.version, m.kind)
      else if (m.kind === 'put') await publisher.put(m.id, valueAt(m.version), { version: m.version })
      else await publisher.invalidate(m.id, { version: m.version })
    }
    const afterMessages = receiver.stats()
    expect(afterMessages.coh_applied + afterMessages.coh_stale).toBe(scenario.delivered.length)
    expect({ applied: afterMessages.coh_applied, stale: afterMessages.coh_stale }).toEqual({ applied: expected.applied, stale: expected.stale })
    expect(afterMessages.size, 'rows and tombstones once every message is in').toBe(expected.rows)
    if (scenario.mode === 'publisher') expect(publisher.stats().coh_applied + publisher.stats().coh_stale).toBe(0) // it ignores its own messages

    // The early puts hear from L2: applied only above every message of their id.
    released = true
    heldAnswers.splice(0).forEach((answer) => answer())
    for (const [id, put] of earlyPuts) expect((await put).applied, `the early put of ${id}`).toBe(expected.putsApplied.has(id))

    // The early loads read the source before any message: they answer v0, which their waiters get.
    for (const call of early.calls) call.resolve(valueAt(0))
    for (const answer of earlyAnswers.values()) expect(await answer).toBe(valueAt(0))

    // ---- no read after the last message returns an older value ----
    const source = (id: string | number, context: LoaderContext) => {
      const version = expected.highest.get(id as Id)!
      context.setVersion(version)
      return valueAt(version)
    }
    for (const id of IDS) {
      const want = valueAt(expected.highest.get(id)!)
      expect(await receiver.fetch(id, source), `first read of ${id}`).toBe(want)
      expect(await receiver.fetch(id, source), `second read of ${id}`).toBe(want)
    }

    // ---- the held version is exactly the highest seen ----
    const before = receiver.stats()
    const above0 = IDS.filter((id) => expected.highest.get(id)! > 0)
    for (const id of above0) await raw(id, expected.highest.get(id)! - 1)
    const probedStale = receiver.stats()
    expect(probedStale.coh_stale - before.coh_stale).toBe(above0.length)
    expect(probedStale.coh_applied).toBe(before.coh_applied)
    for (const id of IDS) await raw(id, expected.highest.get(id)!)
    expect(receiver.stats().coh_applied - probedStale.coh_applied).toBe(IDS.length)
    expect(receiver.stats()).toMatchObject({ inflight: 0, load_errors: 0, coh_invalid: 0 })
  } finally {
    // A failed check must not leave a flight waiting on its latch (close would wait for it).
    for (const call of early.calls) call.resolve(valueAt(0))
    released = true
    heldAnswers.splice(0).forEach((answer) => answer())
    await Promise.all([receiver.close(), publisher.close()])
    await bus.close()
  }
}

describe('coherence: out-of-order delivery', () => {
  it('ends at the highest version per id, counts every message once, and never reads an older value', async () => {
    await fc.assert(fc.asyncProperty(scenarioArb, run), { numRuns: 300 })
  })

  it('the same, for one id with many repeated and reordered versions', async () => {
    const oneId = fc
      .array(fc.record({ version: fc.nat({ max: 4 }), kind: fc.constantFrom<Kind>('put', 'invalidate') }), { minLength: 1, maxLength: 40 })
      .map((ms) => ms.map((m): Message => ({ id: 'a', ...m })))
    const scenario = fc.record({
      mode: fc.constantFrom<Scenario['mode']>('publisher', 'raw'),
      coalesce: fc.boolean(),
      seeds: fc.record({ a: seedArb, b: fc.constant<Seed>({ type: 'none' }), c: fc.constant<Seed>({ type: 'none' }) }),
      delivered: oneId,
    })
    await fc.assert(fc.asyncProperty(scenario, run), { numRuns: 200 })
  })
})
