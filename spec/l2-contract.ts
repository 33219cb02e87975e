import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Id } from '../src/core/id.js'
import type { L2Entry, L2Store, L2Write } from '../src/l2/store.js'

/** A store under test, plus a way to make one of its entries expire without waiting. */
export interface L2Harness {
  store: L2Store
  /** Makes the entry for (table, id), written with `ttl` ms, expire now (or ensures it has). */
  expire(table: string, id: Id, ttl: number): Promise<void>
  /** Makes the entry for (table, id) `ms` older: its lifetime left shrinks by `ms`. */
  age(table: string, id: Id, ms: number): Promise<void>
  /** Another store on the same backend, as another process would open it (closed by the test). */
  peer(): L2Store
  /** Makes the lease of (table, id), taken with `ttl` ms, expire now (or ensures it has). */
  expireLease(table: string, id: Id, ttl: number): Promise<void>
}

let tables = 0
/** A table name no other test of this run uses, so tests sharing a Redis prefix never meet. */
const freshTable = (label = 't'): string => `${label}${++tables}`

const value = (v: unknown, version = 1, ttl = 60_000): L2Write => ({ kind: 'value', value: v, version, ttl })

/** The parts of an entry that do not depend on time. */
function timeless(entry: L2Entry | undefined): Omit<L2Entry, 'ttl'> | undefined {
  if (entry === undefined) return undefined
  const { ttl: _ttl, ...rest } = entry
  return rest
}

/**
 * The `L2Store` contract, for every adapter. Call it inside a `describe`; `make` runs before each test
 * and the store is closed after it.
 */
export function l2ContractSuite(make: () => L2Harness | Promise<L2Harness>): void {
  let h: L2Harness
  beforeEach(async () => {
    h = await make()
  })
  afterEach(async () => {
    await h.store.close()
  })

  it('round-trips a value: set resolves true, get answers kind, value, version and a ttl in (0, written]', async () => {
    const t = freshTable()
    expect(await h.store.set(t, 'a', value({ name: 'party', n: 1 }, 3, 5_000))).toBe(true)
    const entry = await h.store.get(t, 'a')
    expect(timeless(entry)).toEqual({ kind: 'value', value: { name: 'party', n: 1 }, version: 3 })
    expect(entry!.ttl).toBeGreaterThan(0)
    expect(entry!.ttl).toBeLessThanOrEqual(5_000)
    expect(Number.isInteger(entry!.ttl)).toBe(true)
  })

  it('answers undefined for an id never written', async () => {
    expect(await h.store.get(freshTable(), 'nobody')).toBeUndefined()
  })

  it.each<[string, unknown]>([
    ['null', null],
    ['undefined', undefined],
    ['zero', 0],
    ['a negative float', -12.5],
    ['false', false],
    ['the empty string', ''],
    ['a unicode string', 'ünïcødé 🎉 "quoted" \\ back'],
    ['an array', [1, 'two', null, [3]]],
    ['a nested object', { a: { b: { c: [1, { d: 'deep' }] } }, e: null, 'key:with:colons': true }],
  ])('carries %s as a value', async (_label, v) => {
    const t = freshTable()
    await h.store.set(t, 1, value(v))
    const entry = await h.store.get(t, 1)
    expect(entry?.kind).toBe('value')
    expect('value' in entry!).toBe(true)
    expect(entry!.value).toEqual(v)
  })

  it('carries the absent kind (a negative row) without a value', async () => {
    const t = freshTable()
    expect(await h.store.set(t, 'gone', { kind: 'absent', version: 2, ttl: 5_000 })).toBe(true)
    const entry = await h.store.get(t, 'gone')
    expect(timeless(entry)).toEqual({ kind: 'absent', version: 2 })
    expect('value' in entry!).toBe(false)
  })

  it('carries the tombstone kind, and a tombstone fences older versions', async () => {
    const t = freshTable()
    await h.store.set(t, 'x', value('old', 4))
    expect(await h.store.set(t, 'x', { kind: 'tombstone', version: 5, ttl: 5_000 })).toBe(true)
    expect(timeless(await h.store.get(t, 'x'))).toEqual({ kind: 'tombstone', version: 5 })
    expect(await h.store.set(t, 'x', value('stale', 4))).toBe(false)
    expect(await h.store.set(t, 'x', value('new', 6))).toBe(true)
    expect(timeless(await h.store.get(t, 'x'))).toEqual({ kind: 'value', value: 'new', version: 6 })
  })

  it('expires an entry after its ttl; an expired entry no longer fences versions', async () => {
    const t = freshTable()
    await h.store.set(t, 'e', value('soon gone', 7, 1_000))
    await h.expire(t, 'e', 1_000)
    expect(await h.store.get(t, 'e')).toBeUndefined()
    expect(await h.store.set(t, 'e', value('after', 1))).toBe(true)
    expect(timeless(await h.store.get(t, 'e'))).toEqual({ kind: 'value', value: 'after', version: 1 })
  })

  it('keeps an entry written with grace past its ttl: its ttl left goes to 0 and below, then it is gone', async () => {
    const t = freshTable()
    expect(await h.store.set(t, 'g', { kind: 'value', value: 'kept', version: 2, ttl: 1_000, grace: 10_000 })).toBe(true)
    const fresh = await h.store.get(t, 'g')
    expect(fresh).toMatchObject({ kind: 'value', value: 'kept', version: 2, grace: 10_000 })
    expect(fresh!.ttl).toBeGreaterThan(0)
    expect(fresh!.ttl).toBeLessThanOrEqual(1_000)
    await h.age(t, 'g', 5_000)
    const graced = await h.store.get(t, 'g')
    expect(graced).toMatchObject({ kind: 'value', value: 'kept', version: 2, grace: 10_000 })
    expect(graced!.ttl).toBeLessThanOrEqual(-3_000)
    await h.age(t, 'g', 7_000)
    expect(await h.store.get(t, 'g')).toBeUndefined()
  })

  it('guards versions: a lower one is refused, an equal or higher one is written', async () => {
    const t = freshTable()
    expect(await h.store.set(t, 'v', value('five', 5))).toBe(true)
    expect(await h.store.set(t, 'v', value('three', 3))).toBe(false)
    expect(timeless(await h.store.get(t, 'v'))).toEqual({ kind: 'value', value: 'five', version: 5 })
    expect(await h.store.set(t, 'v', value('five again', 5))).toBe(true)
    expect((await h.store.get(t, 'v'))?.value).toBe('five again')
    expect(await h.store.set(t, 'v', value('seven', 7))).toBe(true)
    expect(timeless(await h.store.get(t, 'v'))).toEqual({ kind: 'value', value: 'seven', version: 7 })
    expect(await h.store.set(t, 'v', { kind: 'absent', version: 0, ttl: 1_000 })).toBe(false)
  })

  it('guards versions of an entry written with grace too: a lower one is refused, and minting goes above it', async () => {
    const t = freshTable()
    expect(await h.store.set(t, 'g', { ...value('ten', 10), grace: 5_000 })).toBe(true)
    expect(await h.store.set(t, 'g', { ...value('five', 5), grace: 5_000 })).toBe(false)
    expect(await h.store.set(t, 'g', value('five', 5))).toBe(false)
    expect(timeless(await h.store.get(t, 'g'))).toMatchObject({ kind: 'value', value: 'ten', version: 10 })
    expect(await h.store.nextVersion(t, 'g', 0)).toBeGreaterThan(10)
  })

  it('a refused write leaves the held ttl alone; an accepted one renews it', async () => {
    const t = freshTable()
    await h.store.set(t, 'ttl', value('long', 2, 60_000))
    await h.store.set(t, 'ttl', value('short', 1, 10))
    expect((await h.store.get(t, 'ttl'))!.ttl).toBeGreaterThan(10)
    await h.store.set(t, 'ttl', value('renewed', 2, 5_000))
    expect((await h.store.get(t, 'ttl'))!.ttl).toBeLessThanOrEqual(5_000)
  })

  it('issues versions per (table, id) that only grow, and exceed any version stored', async () => {
    const t = freshTable()
    const first = await h.store.nextVersion(t, 'n', 0)
    expect(first).toBeGreaterThanOrEqual(1)
    const second = await h.store.nextVersion(t, 'n', 0)
    expect(second).toBe(first + 1)
    await h.store.set(t, 'n', value('written elsewhere', 100))
    expect(await h.store.nextVersion(t, 'n', 0)).toBe(101)
    expect(await h.store.nextVersion(t, 'n', 0)).toBe(102)
    expect(await h.store.nextVersion(t, 'n', 0)).toBe(103)
    expect(await h.store.nextVersion(t, 'other', 0)).toBe(1)
    expect(await h.store.nextVersion(freshTable(), 'n', 0)).toBe(1)
  })

  it('never issues less than the caller’s floor, and goes on from the highest of floor, last issued and held', async () => {
    const t = freshTable()
    expect(await h.store.nextVersion(t, 'f', 5_000)).toBe(5_000)
    expect(await h.store.nextVersion(t, 'f', 10)).toBe(5_001)
    await h.store.set(t, 'f', value('ahead', 9_000))
    expect(await h.store.nextVersion(t, 'f', 10)).toBe(9_001)
    expect(await h.store.nextVersion(t, 'f', 20_000)).toBe(20_000)
  })

  it('issues distinct versions to concurrent callers, whatever floors they bring', async () => {
    const t = freshTable()
    const versions = await Promise.all(Array.from({ length: 25 }, () => h.store.nextVersion(t, 'same-floor', 7)))
    expect(new Set(versions).size).toBe(25)
    expect(Math.min(...versions)).toBe(7)
  })

  it('issues distinct versions to concurrent callers', async () => {
    const t = freshTable()
    const versions = await Promise.all(Array.from({ length: 25 }, () => h.store.nextVersion(t, 'c', 0)))
    expect(new Set(versions).size).toBe(25)
    expect(Math.max(...versions)).toBe(25)
  })

  it('refuses a floor or a written version out of range, naming it', async () => {
    const t = freshTable()
    for (const bad of [-1, 1.5, Number.NaN, 2 ** 52 + 1]) {
      await expect(h.store.nextVersion(t, 'r', bad)).rejects.toThrow(/floor must be an integer in \[0, 4503599627370496\]/)
      await expect(h.store.set(t, 'r', value('x', bad))).rejects.toThrow(/version must be an integer in \[0, 4503599627370496\]/)
    }
  })

  it('keeps the number 1 and the string "1" apart', async () => {
    const t = freshTable()
    await h.store.set(t, 1, value('number', 1))
    await h.store.set(t, '1', value('string', 9))
    expect(timeless(await h.store.get(t, 1))).toEqual({ kind: 'value', value: 'number', version: 1 })
    expect(timeless(await h.store.get(t, '1'))).toEqual({ kind: 'value', value: 'string', version: 9 })
    expect((await h.store.get(t, 1))?.value).toBe('number')
    expect(await h.store.nextVersion(t, 1, 0)).toBe(2)
  })

  it('keeps tables apart: same id in two tables, and `a:b`/`c` vs `a`/`b:c`', async () => {
    const t = freshTable()
    await h.store.set(`${t}-one`, 'id', value('one'))
    await h.store.set(`${t}-two`, 'id', value('two'))
    expect((await h.store.get(`${t}-one`, 'id'))?.value).toBe('one')
    expect((await h.store.get(`${t}-two`, 'id'))?.value).toBe('two')
    await h.store.set(`${t}:a:b`, 'c', value('a:b / c'))
    expect(await h.store.get(`${t}:a`, 'b:c')).toBeUndefined()
    await h.store.set(`${t}:a`, 'b:c', value('a / b:c'))
    expect((await h.store.get(`${t}:a:b`, 'c'))?.value).toBe('a:b / c')
    expect((await h.store.get(`${t}:a`, 'b:c'))?.value).toBe('a / b:c')
  })

  it('rejects malformed writes and ids without storing anything', async () => {
    const t = freshTable()
    await expect(h.store.set(t, 'bad', { kind: 'value', value: 1, version: 1, ttl: 0 })).rejects.toThrow(RangeError)
    await expect(h.store.set(t, 'bad', { kind: 'value', value: 1, version: 1, ttl: 1.5 })).rejects.toThrow(RangeError)
    await expect(h.store.set(t, 'bad', { kind: 'value', value: 1, version: -1, ttl: 10 })).rejects.toThrow(RangeError)
    await expect(h.store.set(t, 'bad', { kind: 'value', value: 1, version: 0.5, ttl: 10 })).rejects.toThrow(RangeError)
    await expect(h.store.set(t, 'bad', { kind: 'nope' as never, version: 1, ttl: 10 })).rejects.toThrow(TypeError)
    await expect(h.store.get(t, Number.NaN)).rejects.toThrow(TypeError)
    await expect(h.store.set(t, {} as never, value(1))).rejects.toThrow(TypeError)
    expect(await h.store.get(t, 'bad')).toBeUndefined()
  })

  it('clear: no entry of the table written before it is read again; other tables keep theirs', async () => {
    const [t, other] = [freshTable(), freshTable()]
    await h.store.set(t, 'a', value('old a', 1))
    await h.store.set(t, 2, { kind: 'absent', version: 1, ttl: 60_000 })
    await h.store.set(other, 'a', value('other a', 1))
    await h.store.clear(t)
    expect(await h.store.get(t, 'a')).toBeUndefined()
    expect(await h.store.get(t, 2)).toBeUndefined()
    expect(timeless(await h.store.get(other, 'a'))).toEqual({ kind: 'value', value: 'other a', version: 1 })
    // Writes after the clear are read back, at any version: the old entries do not guard them.
    expect(await h.store.set(t, 'a', value('new a', 1))).toBe(true)
    expect(timeless(await h.store.get(t, 'a'))).toEqual({ kind: 'value', value: 'new a', version: 1 })
    await h.store.clear(t)
    await h.store.clear(t)
    expect(await h.store.get(t, 'a')).toBeUndefined()
  })

  it('clear: versions minted afterwards still grow past every version minted before', async () => {
    const t = freshTable()
    const before = await h.store.nextVersion(t, 'a', 40)
    await h.store.clear(t)
    expect(await h.store.nextVersion(t, 'a', 0)).toBe(before + 1)
  })

  it('clear: a store that did not see it (another process) reads nothing from before, and writes after it', async () => {
    const t = freshTable()
    const peer = h.peer()
    try {
      await h.store.set(t, 'a', value('old', 1))
      expect((await peer.get(t, 'a'))?.value).toBe('old') // the peer has read the table before the clear
      await h.store.clear(t)
      expect(await peer.get(t, 'a')).toBeUndefined()
      await h.store.set(t, 'b', value('old b', 1)) // in the new generation: the peer reads it
      expect(await peer.set(t, 'c', value('from the peer', 1))).toBe(true)
      await h.store.clear(t)
      expect(await peer.set(t, 'd', value('after the second clear', 1))).toBe(true)
      expect((await h.store.get(t, 'd'))?.value).toBe('after the second clear')
      expect(await h.store.get(t, 'c')).toBeUndefined()
    } finally {
      await peer.close()
    }
  })

  describe('getMany (when the store has it)', () => {
    /** Ids spread over many buckets (each with its own clear generation), 1 and '1' among them. */
    const spread = Array.from({ length: 60 }, (_, i): Id => (i % 3 === 0 ? i : `id ${i}`)).concat(['1'])

    it('answers each id as get does, in the order of ids: values, negative rows, tombstones, misses, 1 and "1" apart', async ({ skip }) => {
      if (h.store.getMany === undefined) return skip('this store has no getMany')
      const t = freshTable()
      await h.store.set(t, 'v', value({ n: 1 }, 4))
      await h.store.set(t, 'gone', { kind: 'absent', version: 2, ttl: 60_000 })
      await h.store.set(t, 'dead', { kind: 'tombstone', version: 9, ttl: 60_000 })
      await h.store.set(t, 1, value('number one'))
      const ids: Id[] = ['dead', 'nobody', 1, 'v', '1', 'gone', 'v']
      const many = await h.store.getMany(t, ids)
      const one = await Promise.all(ids.map((id) => h.store.get(t, id)))
      expect(many.map(timeless)).toEqual(one.map(timeless))
      expect(many.map((entry) => entry?.kind)).toEqual(['tombstone', undefined, 'value', 'value', undefined, 'absent', 'value'])
      for (const entry of many.filter((e) => e !== undefined)) expect(entry!.ttl).toBeGreaterThan(0)
      expect(await h.store.getMany(t, [])).toEqual([])
    })

    it('reads nothing written before a clear, in any bucket, by this store or another that did not see it, and a clear asked for first wins', async ({ skip }) => {
      if (h.store.getMany === undefined) return skip('this store has no getMany')
      const t = freshTable()
      const peer = h.peer()
      try {
        await Promise.all(spread.map((id) => h.store.set(t, id, value(`old ${id}`))))
        expect((await peer.getMany!(t, spread)).map((entry) => entry?.value)).toEqual(spread.map((id) => `old ${id}`))
        await h.store.clear(t)
        expect((await peer.getMany!(t, spread)).every((entry) => entry === undefined)).toBe(true)
        await Promise.all(spread.map((id) => peer.set(t, id, value(`new ${id}`))))
        expect((await h.store.getMany!(t, spread)).map((entry) => entry?.value)).toEqual(spread.map((id) => `new ${id}`))
        // A clear asked for before the read (not yet answered) is seen by every id of the read.
        const clearing = h.store.clear(t)
        const read = h.store.getMany!(t, spread)
        await clearing
        expect((await read).every((entry) => entry === undefined)).toBe(true)
      } finally {
        await peer.close()
      }
    })
  })

  describe('tags', () => {
    const tagKeys = ['[[],"depot:1"]', '[[],"depot:2"]', '[["tenant-a"]]']

    it('round-trips a tagged value or absent entry with its tag keys and birth; a tombstone carries none', async () => {
      const t = freshTable()
      await h.store.set(t, 'a', { ...value('stock', 2), tags: tagKeys, born: 17 })
      await h.store.set(t, 'b', { kind: 'absent', version: 1, ttl: 60_000, tags: tagKeys.slice(0, 1), born: 5 })
      await h.store.set(t, 'c', { kind: 'tombstone', version: 1, ttl: 60_000, tags: tagKeys, born: 5 })
      expect(timeless(await h.store.get(t, 'a'))).toEqual({ kind: 'value', value: 'stock', version: 2, tags: tagKeys, born: 17 })
      expect(timeless(await h.store.get(t, 'b'))).toEqual({ kind: 'absent', version: 1, tags: tagKeys.slice(0, 1), born: 5 })
      expect(timeless(await h.store.get(t, 'c'))).toEqual({ kind: 'tombstone', version: 1 })
      // And through another process's store.
      const peer = h.peer()
      try {
        expect(timeless(await peer.get(t, 'a'))).toEqual({ kind: 'value', value: 'stock', version: 2, tags: tagKeys, born: 17 })
      } finally {
        await peer.close()
      }
    })

    it('tag versions: 0 until invalidated; each invalidation mints max(floor, last + 1) per tag, per table, seen by another process', async () => {
      const [t, other] = [freshTable(), freshTable()]
      expect(await h.store.tagVersions!(t, tagKeys)).toEqual([0, 0, 0])
      expect(await h.store.invalidateTags!(t, tagKeys.slice(0, 2), 100)).toEqual([100, 100])
      expect(await h.store.invalidateTags!(t, tagKeys.slice(1), 50)).toEqual([101, 50])
      expect(await h.store.invalidateTags!(t, tagKeys.slice(0, 1), 0)).toEqual([101])
      const peer = h.peer()
      try {
        expect(await peer.tagVersions!(t, tagKeys)).toEqual([101, 101, 50])
        expect(await peer.tagVersions!(other, tagKeys)).toEqual([0, 0, 0])
      } finally {
        await peer.close()
      }
    })

    it('tag versions outlive a clear of the table (entries written after it may still carry the tags)', async () => {
      const t = freshTable()
      await h.store.invalidateTags!(t, tagKeys.slice(0, 1), 7)
      await h.store.clear(t)
      expect(await h.store.tagVersions!(t, tagKeys.slice(0, 1))).toEqual([7])
    })

    it('refuses tag keys that are not strings, and a floor out of range, naming them', async () => {
      const t = freshTable()
      await expect(h.store.tagVersions!(t, [1 as unknown as string])).rejects.toThrow(/tags must be an array of strings/)
      await expect(h.store.invalidateTags!(t, tagKeys, -1)).rejects.toThrow(/floor must be an integer/)
    })
  })

  describe('leases', () => {
    it('acquireMany (when the store has it) takes each free lease under one token, refuses the held ones, in the order of ids', async ({ skip }) => {
      const leases = h.store.leases!
      if (leases.acquireMany === undefined) return skip('this store has no leases.acquireMany')
      const t = freshTable()
      const ids: Id[] = Array.from({ length: 40 }, (_, i): Id => (i % 2 === 0 ? i : `id ${i}`))
      expect(await leases.acquire(t, 4, 'other', 60_000)).toBe(true)
      expect(await leases.acquire(t, 'id 7', 'other', 60_000)).toBe(true)
      const taken = await leases.acquireMany(t, ids, 'batch', 60_000)
      expect(taken).toEqual(ids.map((id) => id !== 4 && id !== 'id 7'))
      expect(await leases.acquire(t, 0, 'late', 60_000)).toBe(false)
      expect(await leases.release(t, 0, 'batch')).toBe(true) // each lease goes back on its own
      expect(await leases.release(t, 2, 'other')).toBe(false)
      expect(await leases.acquire(t, 0, 'late', 60_000)).toBe(true)
      expect(await leases.acquireMany(t, ['x', 'x', 0], 'again', 60_000)).toEqual([true, false, false]) // an id twice is taken once
      expect(await leases.acquireMany(t, [], 'none', 60_000)).toEqual([])
      await expect(leases.acquireMany(t, ['y'], '', 1_000)).rejects.toThrow(TypeError)
      await expect(leases.acquireMany(t, ['y'], 'x', 0)).rejects.toThrow(RangeError)
      await expect(leases.acquireMany(t, ['y', {} as never], 'x', 1_000)).rejects.toThrow(TypeError)
      expect(await leases.acquire(t, 'y', 'x', 1_000)).toBe(true) // a refused call took nothing
    })

    it('readOrAcquire (when the store has it) reads as get does and takes the lease unless it read a fill of a version ≥ floor', async ({ skip }) => {
      const leases = h.store.leases!
      if (leases.readOrAcquire === undefined) return skip('this store has no leases.readOrAcquire')
      const t = freshTable()
      expect(await leases.readOrAcquire(t, 'none', 'one', 60_000, 0)).toEqual({ entry: undefined, lease: 'taken' })
      expect(await leases.readOrAcquire(t, 'none', 'two', 60_000, 0)).toEqual({ entry: undefined, lease: 'busy' })
      await h.store.set(t, 'v', value('three', 3))
      const fill = await leases.readOrAcquire(t, 'v', 'one', 60_000, 3)
      expect([fill.lease, timeless(fill.entry)]).toEqual(['unasked', { kind: 'value', value: 'three', version: 3 }])
      expect(await leases.acquire(t, 'v', 'probe', 60_000)).toBe(true) // a fill took no lease
      await leases.release(t, 'v', 'probe')
      expect((await leases.readOrAcquire(t, 'v', 'one', 60_000, 4)).lease).toBe('taken') // older than what the reader knows
      await h.store.set(t, 'gone', { kind: 'absent', version: 1, ttl: 60_000 })
      expect((await leases.readOrAcquire(t, 'gone', 'one', 60_000, 1)).lease).toBe('unasked')
      await h.store.set(t, 'dead', { kind: 'tombstone', version: 5, ttl: 60_000 })
      const dead = await leases.readOrAcquire(t, 'dead', 'one', 60_000, 0)
      expect([dead.lease, dead.entry?.kind, dead.entry?.version]).toEqual(['taken', 'tombstone', 5])
      await h.store.set(t, 'graced', { kind: 'value', value: 'old', version: 1, ttl: 5_000, grace: 60_000 })
      await h.age(t, 'graced', 6_000)
      const graced = await leases.readOrAcquire(t, 'graced', 'one', 60_000, 0)
      expect([graced.lease, graced.entry?.value]).toEqual(['taken', 'old'])
      expect(graced.entry!.ttl).toBeLessThanOrEqual(0)
      await h.store.set(t, 'cleared', value('before the clear'))
      await h.store.clear(t)
      expect(await leases.readOrAcquire(t, 'cleared', 'one', 60_000, 0)).toEqual({ entry: undefined, lease: 'taken' })
      await expect(leases.readOrAcquire(t, 'x', '', 1_000, 0)).rejects.toThrow(TypeError)
      await expect(leases.readOrAcquire(t, 'x', 'one', 0, 0)).rejects.toThrow(RangeError)
      await expect(leases.readOrAcquire(t, 'x', 'one', 1_000, -1)).rejects.toThrow(RangeError)
      expect(await leases.acquire(t, 'x', 'one', 1_000)).toBe(true) // a refused call took nothing
    })

    it('setAndRelease (when the store has it) writes as set does; a write that landed ends the lease whoever holds it, a refused one releases it under its token only', async ({ skip }) => {
      const leases = h.store.leases!
      if (leases.setAndRelease === undefined) return skip('this store has no leases.setAndRelease')
      const t = freshTable()
      expect(await leases.acquire(t, 'a', 'holder', 60_000)).toBe(true)
      expect(await leases.setAndRelease(t, 'a', value('filled', 2), 'holder')).toBe(true)
      expect(timeless(await h.store.get(t, 'a'))).toEqual({ kind: 'value', value: 'filled', version: 2 })
      expect(await leases.acquire(t, 'a', 'next', 60_000)).toBe(true) // given back
      expect(await leases.setAndRelease(t, 'a', value('older', 1), 'next')).toBe(false) // refused by the version guard
      expect(await leases.acquire(t, 'a', 'third', 60_000)).toBe(true) // still given back
      expect(await leases.setAndRelease(t, 'a', value('older still', 1), 'not the holder')).toBe(false)
      expect(await leases.acquire(t, 'a', 'fourth', 60_000)).toBe(false) // refused, another token's lease stays
      expect(await leases.setAndRelease(t, 'a', value('newer', 3), 'not the holder')).toBe(true)
      expect(await leases.acquire(t, 'a', 'fifth', 60_000)).toBe(true) // the fill landed: whoever held the lease, it ended
      await expect(leases.setAndRelease(t, 'a', value('x', 4), '')).rejects.toThrow(TypeError)
      await expect(leases.setAndRelease(t, 'a', { kind: 'value', value: 1, version: 1, ttl: 0 }, 'third')).rejects.toThrow(RangeError)
    })

    it('one holder at a time: a second token is refused until the first releases; a wrong token releases nothing', async () => {
      const t = freshTable()
      const leases = h.store.leases!
      expect(await leases.acquire(t, 'a', 'one', 60_000)).toBe(true)
      expect(await leases.acquire(t, 'a', 'two', 60_000)).toBe(false)
      expect(await leases.acquire(t, 'a', 'one', 60_000)).toBe(false) // not re-entrant either
      expect(await leases.release(t, 'a', 'two')).toBe(false)
      expect(await leases.acquire(t, 'a', 'two', 60_000)).toBe(false)
      expect(await leases.release(t, 'a', 'one')).toBe(true)
      expect(await leases.release(t, 'a', 'one')).toBe(false)
      expect(await leases.acquire(t, 'a', 'two', 60_000)).toBe(true)
    })

    it('names the token that holds a lease, none once it is released or ran out', async () => {
      const t = freshTable()
      const leases = h.store.leases!
      expect(await leases.holder!(t, 'a')).toBeUndefined()
      expect(await leases.acquire(t, 'a', 'first', 5_000)).toBe(true)
      expect(await leases.holder!(t, 'a')).toBe('first')
      expect(await leases.holder!(t, 1)).toBeUndefined()
      await h.expireLease(t, 'a', 5_000)
      expect(await leases.holder!(t, 'a')).toBeUndefined()
      expect(await leases.acquire(t, 'a', 'second', 5_000)).toBe(true)
      expect(await leases.holder!(t, 'a')).toBe('second')
      expect(await leases.release(t, 'a', 'second')).toBe(true)
      expect(await leases.holder!(t, 'a')).toBeUndefined()
    })

    it('a lease ends by itself after its ttl, and a void ends it whoever holds it', async () => {
      const t = freshTable()
      const leases = h.store.leases!
      expect(await leases.acquire(t, 'a', 'dead', 5_000)).toBe(true)
      await h.expireLease(t, 'a', 5_000)
      expect(await leases.acquire(t, 'a', 'next', 5_000)).toBe(true)
      await leases.void(t, 'a')
      expect(await leases.release(t, 'a', 'next')).toBe(false)
      expect(await leases.acquire(t, 'a', 'after the void', 5_000)).toBe(true)
    })

    it('keeps ids, tables and 1 / "1" apart, and is seen by another process', async () => {
      const [t, u] = [freshTable(), freshTable()]
      const leases = h.store.leases!
      const peer = h.peer()
      try {
        expect(await leases.acquire(t, 1, 'x', 60_000)).toBe(true)
        expect(await leases.acquire(t, '1', 'x', 60_000)).toBe(true)
        expect(await leases.acquire(t, 2, 'x', 60_000)).toBe(true)
        expect(await leases.acquire(u, 1, 'x', 60_000)).toBe(true)
        expect(await peer.leases!.acquire(t, 1, 'y', 60_000)).toBe(false)
        expect(await peer.leases!.release(t, 1, 'x')).toBe(true)
        expect(await leases.acquire(t, 1, 'z', 60_000)).toBe(true)
      } finally {
        await peer.close()
      }
    })

    it('refuses an empty token or a ttl that is not an integer ≥ 1, and rejects after close', async () => {
      const t = freshTable()
      const leases = h.store.leases!
      await expect(leases.acquire(t, 'a', '', 1_000)).rejects.toThrow(TypeError)
      await expect(leases.acquire(t, 'a', 'x', 0)).rejects.toThrow(RangeError)
      await expect(leases.acquire(t, 'a', 'x', 1.5)).rejects.toThrow(/ttl/)
      await h.store.close()
      await expect(leases.acquire(t, 'a', 'x', 1_000)).rejects.toThrow(/close/)
    })
  })

  it('closes idempotently; calls after close reject', async () => {
    await h.store.close()
    await h.store.close()
    await expect(h.store.get(freshTable(), 'x')).rejects.toThrow(/close/)
    await expect(h.store.set(freshTable(), 'x', value(1))).rejects.toThrow(/close/)
    await expect(h.store.clear(freshTable())).rejects.toThrow(/close/)
  })
}
