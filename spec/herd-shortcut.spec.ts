/**
 * The herd's shortcut (a read of the id of the turn's last miss takes that miss's promise, with no
 * other check and no lookup) answers no read it must not: a read after close() is refused, a base
 * table's read of a namespace's key is refused, and a loader's fetch of its own id is refused with
 * `SelfFetchError` even when a read of that id became the turn's last miss just before the loader was
 * called. Such a read comes from a tick callback queued before the batch window's dispatch, or from
 * a promise job between an L2 answer and the loader call; each is placed there here, hop by hop,
 * with latches. A herd's counters are those of the same reads made with `{}` options (which take
 * no shortcut): each read of a row older than one of its tags counts a `tag_stale`.
 */
import { describe, expect, it } from 'vitest'
import { type Id, SelfFetchError, TableClosedError, createTable, memoryL2 } from '../src/index.js'
import type { L2Store } from '../src/store.js'
import { manualClock } from '../src/testing.js'

/** A loader's answer that first fetches its own id from inside it, as a loader re-entering its table would. */
function reentering(fetchOwn: (id: Id) => Promise<unknown>) {
  const inner: Promise<unknown>[] = []
  return {
    inner,
    answer(id: Id): string {
      inner.push(fetchOwn(id))
      return `${String(id)} loaded`
    },
  }
}

/** Runs `then` after `hops` promise jobs. */
function afterHops(hops: number, then: () => void): void {
  if (hops === 0) return then()
  void Promise.resolve().then(() => afterHops(hops - 1, then))
}

describe('the herd shortcut', () => {
  it('a read made after close(), in the turn of a miss on its id, is refused, not joined', async () => {
    const clock = manualClock(0)
    const store = memoryL2({ clock })
    let answerRead!: () => void
    // L2 answers the flight's read when the test says, so no loader is entered while the table closes.
    const l2: L2Store = { ...store, get: (t, id) => new Promise((resolve) => (answerRead = () => resolve(store.get(t, id)))) }
    const table = createTable<string, Id>({ name: 'shortcut', clock, l2 })
    const first = table.fetch('a', () => 'a loaded')
    const closing = table.close()
    await expect(table.fetch('a', () => 'never')).rejects.toBeInstanceOf(TableClosedError)
    answerRead()
    expect(await first).toBe('a loaded')
    await closing
  })

  it("a base table's read of a namespace's key, made while that key is the turn's last miss, is refused, not joined", async () => {
    const table = createTable<string, Id>({ name: 'shortcut', clock: manualClock(0) })
    const view = table.namespace('ns')
    const inView = view.fetch('x', () => 'x in ns')
    // The key the view's miss was stored under: the mark, then the JSON of the path and the id.
    const key = `\uDC00${JSON.stringify(['ns', 'x'])}`
    const refused = table.fetch(key, () => 'never')
    await expect(refused).rejects.toBeInstanceOf(TypeError)
    expect(await inView).toBe('x in ns')
    expect(table.stats()).toMatchObject({ misses: 1, coalesced: 0, loads: 1 })
    await table.close()
  })

  it('a read in a tick callback just before the batch window dispatches does not hand the batch loader its own flight', async () => {
    const { inner, answer } = reentering((id) => table.fetch(id, () => 'never'))
    const table = createTable<string, Id>({ name: 'shortcut', clock: manualClock(0), batchLoader: (ids) => ids.map(answer) })
    const first = table.get('a')
    // The flight starts a job later; the window queues its dispatch as a tick callback a job after that.
    let herd: Promise<string> | undefined
    afterHops(1, () => process.nextTick(() => (herd = table.get('a'))))
    expect(await first).toBe('a loaded')
    expect(await herd).toBe('a loaded')
    expect(inner).toHaveLength(1)
    await expect(inner[0]).rejects.toBeInstanceOf(SelfFetchError)
    expect(table.stats()).toMatchObject({ misses: 2, coalesced: 1, loads: 1 })
    await table.close()
  })

  it('a read in any promise job between an L2 answer and the loader call does not hand the loader its own flight', async () => {
    for (let hops = 0; hops <= 8; hops++) {
      const clock = manualClock(0)
      const store = memoryL2({ clock })
      let answerRead!: () => void
      // L2's read of the id answers when the test says: a miss.
      const l2: L2Store = { ...store, get: (t, id) => new Promise((resolve) => (answerRead = () => resolve(store.get(t, id)))) }
      const { inner, answer } = reentering((id) => table.fetch(id, () => 'never'))
      const table = createTable<string, Id>({ name: 'shortcut', clock, jitter: 0, l2 })
      const first = table.fetch('a', answer)
      await Promise.resolve()
      await Promise.resolve()
      let herd: Promise<string> | undefined
      answerRead()
      afterHops(hops, () => (herd = table.fetch('a', answer)))
      expect(await first, `read ${hops} jobs after L2 answered`).toBe('a loaded')
      expect(await herd, `read ${hops} jobs after L2 answered`).toBe('a loaded')
      expect(inner, `read ${hops} jobs after L2 answered`).toHaveLength(1)
      await expect(inner[0], `read ${hops} jobs after L2 answered`).rejects.toBeInstanceOf(SelfFetchError)
      await table.close()
    }
  })

  it.each([
    ['a herd of plain reads (the shortcut)', false],
    ['the same reads with {} options', true],
  ])('%s of a row older than one of its tags counts a tag_stale for every read', async (_, withOptions) => {
    const table = createTable<string, Id>({ clock: manualClock(0) })
    let loads = 0
    const loader = (_id: Id, context: { setTags(tags: string[]): void }) => {
      context.setTags(['t'])
      return `v${++loads}`
    }
    expect(await table.fetch('a', loader)).toBe('v1')
    await table.invalidateTags(['t'])
    const read = () => (withOptions ? table.fetch('a', loader, {}) : table.fetch('a', loader))
    expect(await Promise.all([read(), read(), read()])).toEqual(['v2', 'v2', 'v2'])
    await new Promise((resolve) => setImmediate(resolve))
    expect(table.stats()).toMatchObject({ misses: 4, tag_stale: 3, coalesced: 2, loads: 2 })
    await table.close()
  })
})
