/**
 * The law of tags and namespaces: no read returns a value older than the last change that covered
 * it. The origin keeps a version per (namespace, id), and a value is its version; a change of the
 * origin followed by a put, an invalidate, a tag invalidation, a clear or a namespace clear covers
 * the ids it reaches (the base table's tags and clear reach every namespace). Two tables share one
 * memoryL2 and one localBus, standing in for two processes; a change made on one is checked on both,
 * once the bus has delivered it.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { type Id, type LoaderContext, type Table, createTable, localBus, memoryL2 } from '../src/index.js'
import type { L2Store } from '../src/store.js'
import { manualClock } from '../src/testing.js'
import { settle } from './support/latch.js'

const IDS = ['a', 'b', 'c'] as const
const SCOPES = ['', 'n'] as const
const TAGS = ['t1', 't2'] as const
type Scope = (typeof SCOPES)[number]
type RowId = (typeof IDS)[number]
type Tag = (typeof TAGS)[number]

/** The origin's tags of an id, whatever its namespace. */
const TAGS_OF: Record<RowId, Tag[]> = { a: ['t1'], b: ['t2'], c: ['t1', 't2'] }
const keyOf = (scope: Scope, id: RowId): string => `${scope}/${id}`
const ALL_KEYS = SCOPES.flatMap((scope) => IDS.map((id) => ({ scope, id, key: keyOf(scope, id) })))

/** The ids a change made in `scope` reaches: its own, and for the base table every namespace's too. */
function reached(scope: Scope): typeof ALL_KEYS {
  return scope === '' ? ALL_KEYS : ALL_KEYS.filter((k) => k.scope === scope)
}

/**
 * The origin: a version per key, and the least version a read of each key may answer (the origin's
 * version at the last change that covered it). Written only by the steps of the test.
 */
class Origin {
  readonly versions = new Map<string, number>(ALL_KEYS.map(({ key }) => [key, 0]))
  readonly floors = new Map<string, number>(ALL_KEYS.map(({ key }) => [key, 0]))
  /** The origin changes `key`; the change covers it once the table has been told. */
  change(key: string): number {
    const version = this.versions.get(key)! + 1
    this.versions.set(key, version)
    return version
  }
  covered(key: string): void {
    this.floors.set(key, this.versions.get(key)!)
  }
}

/** A loader answering the origin's current version of (scope, id), with the origin's tags for the id. */
function loaderOf(origin: Origin, scope: Scope, answer: (value: string) => Promise<string> = async (value) => value) {
  return async (id: Id, context: LoaderContext): Promise<string> => {
    context.setTags(TAGS_OF[id as RowId])
    return answer(String(origin.versions.get(keyOf(scope, id as RowId))!))
  }
}

type Step =
  | { kind: 'fetch'; table: number; scope: Scope; id: RowId }
  | { kind: 'put'; table: number; scope: Scope; id: RowId }
  | { kind: 'invalidate'; table: number; scope: Scope; id: RowId }
  | { kind: 'tags'; table: number; scope: Scope; tag: Tag }
  | { kind: 'clear'; table: number; scope: Scope }
  | { kind: 'advance'; ms: number }

const table = fc.integer({ min: 0, max: 1 })
const scope = fc.constantFrom(...SCOPES)
const id = fc.constantFrom(...IDS)
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('fetch' as const), table, scope, id }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('put' as const), table, scope, id }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('invalidate' as const), table, scope, id }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('tags' as const), table, scope, tag: fc.constantFrom(...TAGS) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('clear' as const), table, scope }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 1, max: 4_000 }) }) },
)

/** Two tables ("processes") on one L2 and one bus, each with its namespace `n`. */
function world(l2Of: (store: L2Store) => L2Store = (store) => store) {
  const clock = manualClock(0)
  const l2 = l2Of(memoryL2({ clock }))
  const bus = localBus()
  const tables = [0, 1].map(() => createTable<string>({ name: 'law', ttl: 10_000, jitter: 0, sweepInterval: 1e9, clock, l2, bus }))
  const views = tables.map((base) => ({ '': base, n: base.namespace('n') }) as Record<Scope, Table<string>>)
  /** A third table on the same L2, without the bus: a process started afterwards. */
  const cold = () => {
    const base = createTable<string>({ name: 'law', ttl: 10_000, jitter: 0, sweepInterval: 1e9, clock, l2 })
    tables.push(base)
    return { '': base, n: base.namespace('n') } as Record<Scope, Table<string>>
  }
  return { clock, tables, views, cold, close: () => Promise.all(tables.map((t) => t.close())) }
}

/** A read's answer is no older than the key's floor when it started (and no newer than the origin). */
function checkRead(origin: Origin, key: string, floor: number, value: string | undefined, what: string): void {
  if (value === undefined) return
  const version = Number(value)
  if (version < floor) throw new Error(`${what} of ${key} answered version ${version}, older than the last change that covered it (${floor})`)
  expect(version).toBeLessThanOrEqual(origin.versions.get(key)!)
}

describe('tags and namespaces: no read is older than the last change that covered it', () => {
  it('after any sequence of puts, fetches, tag invalidations, invalidates, clears and namespace clears, over two tables', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 40 }), async (steps) => {
        const { clock, views, close } = world()
        const origin = new Origin()
        try {
          for (const s of steps) {
            if (s.kind === 'advance') {
              clock.advance(s.ms)
              continue
            }
            const view = views[s.table]![s.scope]
            if (s.kind === 'fetch') {
              const key = keyOf(s.scope, s.id)
              const floor = origin.floors.get(key)!
              for (const [i, other] of views.entries()) checkRead(origin, key, floor, other[s.scope].peek(s.id), `peek on table ${i}`)
              checkRead(origin, key, floor, await view.fetch(s.id, loaderOf(origin, s.scope)), `fetch on table ${s.table}`)
              continue
            }
            if (s.kind === 'put') {
              const key = keyOf(s.scope, s.id)
              const version = origin.change(key)
              await view.put(s.id, String(version), { tags: TAGS_OF[s.id] })
              origin.covered(key)
            } else if (s.kind === 'invalidate') {
              const key = keyOf(s.scope, s.id)
              origin.change(key)
              await view.invalidate(s.id)
              origin.covered(key)
            } else if (s.kind === 'tags') {
              const keys = reached(s.scope).filter((k) => TAGS_OF[k.id].includes(s.tag))
              for (const { key } of keys) origin.change(key)
              await view.invalidateTags([s.tag])
              for (const { key } of keys) origin.covered(key)
            } else {
              const keys = reached(s.scope)
              for (const { key } of keys) origin.change(key)
              await view.clear()
              for (const { key } of keys) origin.covered(key)
            }
            await settle() // the bus delivered the change to the other table
          }
          // Every key, read afresh in both tables, is as new as its last covering change.
          for (const [i, set] of views.entries()) {
            for (const { scope, id, key } of ALL_KEYS) checkRead(origin, key, origin.floors.get(key)!, await set[scope].fetch(id, loaderOf(origin, scope)), `final fetch on table ${i}`)
          }
        } finally {
          await close()
        }
      }),
      { numRuns: 200 },
    )
  })

  it('when a tag invalidation (taken by L2 or failed there) races loads in flight and L2 reads and writes in any order, after rows were loaded (fc.scheduler)', async () => {
    const read = fc.record({ table, scope, id })
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.array(fc.record({ table, scope, id, put: fc.boolean() }), { maxLength: 5 }),
        fc.array(read, { minLength: 1, maxLength: 5 }),
        fc.record({ table, scope, tag: fc.constantFrom(...TAGS) }),
        fc.array(read, { minLength: 1, maxLength: 5 }),
        fc.boolean(),
        async (s, warm, before, change, after, l2Fails) => {
          // Every L2 call and every loader answer is settled in the order the scheduler picks.
          const scheduled = (store: L2Store): L2Store => ({
            get: s.scheduleFunction(function get(t: string, i: Id) {
              return store.get(t, i)
            }),
            set: s.scheduleFunction(function set(t: string, i: Id, entry: Parameters<L2Store['set']>[2]) {
              return store.set(t, i, entry)
            }),
            nextVersion: (t, i, floor) => store.nextVersion(t, i, floor),
            clear: (t) => store.clear(t),
            tagVersions: s.scheduleFunction(function tagVersions(t: string, tags: readonly string[]) {
              return store.tagVersions!(t, tags)
            }),
            // When it fails, only the two tables know of the invalidation (by the bus): neither may answer from before it.
            invalidateTags: s.scheduleFunction(function invalidateTags(t: string, tags: readonly string[], floor: number) {
              return l2Fails ? Promise.reject(new Error('L2 failed the tag invalidation')) : store.invalidateTags!(t, tags, floor)
            }),
            close: () => store.close(),
          })
          const { views, cold, close } = world(scheduled)
          const origin = new Origin()
          const answer = (value: string) => s.schedule(Promise.resolve(value), `answer ${value}`)
          const fetchOf = (r: { table: number; scope: Scope; id: RowId }) => views[r.table]![r.scope].fetch(r.id, loaderOf(origin, r.scope, answer))
          const problems: string[] = []
          const checked = (r: { table: number; scope: Scope; id: RowId }, floor: number, what: string) =>
            fetchOf(r).then(
              (value) => {
                try {
                  checkRead(origin, keyOf(r.scope, r.id), floor, value, what)
                } catch (error) {
                  problems.push((error as Error).message)
                }
              },
              (error: unknown) => problems.push(`${what} rejected: ${String(error)}`),
            )
          try {
            // Rows loaded or put (a minted version) and written to L2 before the race, in any order,
            // puts of one key racing each other too (on one table or both).
            const warmUp = async (r: (typeof warm)[number]): Promise<unknown> => {
              const key = keyOf(r.scope, r.id)
              if (!r.put) return fetchOf(r)
              const version = origin.change(key)
              await views[r.table]![r.scope].put(r.id, String(version), { tags: TAGS_OF[r.id] })
              return origin.covered(key)
            }
            await s.waitFor(Promise.all(warm.map((r) => warmUp(r).catch((error: unknown) => problems.push(`warm ${r.put ? 'put' : 'fetch'} rejected: ${String(error)}`)))))
            const early = before.map((r) => fetchOf(r).catch((error: unknown) => problems.push(`early fetch rejected: ${String(error)}`)))
            const keys = reached(change.scope).filter((k) => TAGS_OF[k.id].includes(change.tag))
            // The origin changes (and the invalidation starts) when the scheduler says: loads may have read it before.
            const raced = s.schedule(Promise.resolve(), 'change the origin, invalidate').then(async () => {
              for (const { key } of keys) origin.change(key)
              await views[change.table]![change.scope].invalidateTags([change.tag])
              for (const { key } of keys) origin.covered(key)
              // On the invalidating table, a read that starts now; on the other, once the bus delivered.
              const here = after.filter((r) => r.table === change.table)
              const there = after.filter((r) => r.table !== change.table)
              const mine = here.map((r) => checked(r, origin.floors.get(keyOf(r.scope, r.id))!, 'fetch after invalidateTags'))
              await settle()
              return Promise.all([...mine, ...there.map((r) => checked(r, origin.floors.get(keyOf(r.scope, r.id))!, 'fetch after the bus delivered'))])
            })
            await s.waitFor(Promise.all([...early, raced]))
            await s.waitIdle() // the write-backs still on their way land, in any order
            await settle()
            // Then every key, read afresh in both tables, is as new as its last covering change.
            const last = ALL_KEYS.flatMap(({ scope, id, key }) => [0, 1].map((t) => checked({ table: t, scope, id: id as RowId }, origin.floors.get(key)!, `final fetch on table ${t}`)))
            await s.waitFor(Promise.all(last))
            // Each key was just answered afresh by both: a process started now finds it in L2 (the
            // reloads replaced what the invalidation made stale, put entries of minted versions included).
            const late = cold()
            const loaded: string[] = []
            const reads = ALL_KEYS.map(({ scope, id, key }) =>
              late[scope]
                .fetch(id, async (_id: Id, context: LoaderContext) => (loaded.push(key), loaderOf(origin, scope)(id, context)))
                .then((value: string | undefined) => checkRead(origin, key, origin.floors.get(key)!, value, 'fetch on a new table')),
            )
            await s.waitFor(Promise.all(reads))
            expect(problems, String(s)).toEqual([])
            expect(loaded, String(s)).toEqual([])
          } finally {
            await s.waitIdle()
            await close()
          }
        },
      ),
      { numRuns: 200 },
    )
  })
})
