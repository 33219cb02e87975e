/**
 * A read made while the owner processes a batch (from an inspector, a `sizeOf`, an event listener)
 * may be followed, in that same processing, by a change of its id: a put, a fill, an invalidate, a
 * clear, the coalescing gate. So the mailbox decides nothing for such a read: the owner does, as it
 * handles its message. A read made after the change, still in that processing, sees the change: it
 * never joins a miss made before it, by the herd's shortcut or by this turn's misses, nor a flight
 * the gate no longer lets it join, and a live row is a hit.
 * Each read is placed with an inspector around the batch that holds the change; every case is run
 * as a plain read (the herd's shortcut) and with `{}` options (the mailbox's misses).
 */
import { describe, expect, it } from 'vitest'
import { type Id, type OwnerInspectionEvent, type Table, createTable } from '../src/index.js'
import { manualClock } from '../src/testing.js'
import { settle } from './support/latch.js'

/** A batch as an inspector sees it. */
interface SeenBatch {
  type: string
  messages?: { type: string; id?: unknown }[]
}

/** An inspector that calls `before` as a batch holding a message of `kind` is sent to the owner, and `after` as that batch's snapshot is committed. */
function around(kind: string, before: () => void, after: () => void): (event: OwnerInspectionEvent) => void {
  let armed = false
  return (event) => {
    const batch = (event as { event?: unknown }).event as SeenBatch | undefined
    if (!(batch?.type === 'batch' && batch.messages?.some((message) => message.type === kind))) return
    if (event.type === '@xstate.event') {
      armed = true
      before()
    } else if (event.type === '@xstate.snapshot' && armed) {
      armed = false
      after()
    }
  }
}

/** A loader whose calls wait to be released, in call order. */
function latched() {
  const releases: ((value: string) => void)[] = []
  return { releases, loader: () => new Promise<string>((resolve) => releases.push(resolve)) }
}

/** Lets a new flight's loader be called (it starts a microtask after the miss's turn). */
async function flightStarted(): Promise<void> {
  await Promise.resolve()
  await Promise.resolve()
}

describe.each([
  ['a plain read', false],
  ['a read with {} options', true],
])('%s made while the owner processes a batch', (_, withOptions) => {
  const read = (table: Table<string, Id>, id: Id, loader: (id: Id) => Promise<string>) => (withOptions ? table.fetch(id, loader, {}) : table.fetch(id, loader))

  it("after a put of its id was applied, answers the put's value, not the flight's it superseded", async () => {
    const origin = latched()
    let before: Promise<string> | undefined
    let after: Promise<string> | undefined
    let peekedAfter: string | undefined
    const table = createTable<string, Id>({
      clock: manualClock(0),
      inspect: around(
        'put',
        () => (before = read(table, 'a', origin.loader)),
        () => {
          peekedAfter = table.peek('a')
          after = read(table, 'a', origin.loader)
        },
      ),
    })
    const first = table.fetch('a', origin.loader)
    await flightStarted()
    expect((await table.put('a', 'NEW')).applied).toBe(true)
    expect(peekedAfter).toBe('NEW')
    origin.releases[0]!('OLD')
    expect(await first).toBe('OLD')
    expect(await before, 'made as the put was processed: decided by the owner, after the put').toBe('NEW')
    expect(await after).toBe('NEW')
    await table.close()
  })

  it('after its flight filled its row, is a hit', async () => {
    const origin = latched()
    let after: Promise<string> | undefined
    const table = createTable<string, Id>({
      clock: manualClock(0),
      inspect: around(
        'flight.done',
        () => void read(table, 'a', origin.loader),
        () => (after = read(table, 'a', origin.loader)),
      ),
    })
    const first = table.fetch('a', origin.loader)
    await flightStarted()
    origin.releases[0]!('A')
    expect(await first).toBe('A')
    expect(await after).toBe('A')
    await settle()
    // The first read and the one made as the answer arrived miss; the one made after the fill hits.
    expect(table.stats()).toMatchObject({ hits: 1, misses: 2, flights: 1 })
    await table.close()
  })

  it('from sizeOf, after its row was stored earlier in the same batch, is a hit', async () => {
    const reads: Promise<string>[] = []
    let liveWhenRead: boolean | undefined
    const loader = async (id: Id) => `value of ${String(id)}`
    const table = createTable<string, Id>({
      clock: manualClock(0),
      maxSize: 1_000,
      batchLoader: (ids) => ids.map((id) => `value of ${String(id)}`),
      sizeOf: (_value, id) => {
        if (id === 'a') reads.push(read(table, 'b', loader)) // b has no row yet
        if (id === 'c') {
          liveWhenRead = table.has('b')
          reads.push(read(table, 'b', loader))
        }
        return 1
      },
    })
    expect(await table.getMany(['a', 'b', 'c'])).toEqual(['value of a', 'value of b', 'value of c'])
    expect(liveWhenRead).toBe(true)
    expect(await Promise.all(reads)).toEqual(['value of b', 'value of b'])
    await settle()
    // getMany: 3 misses and 3 flights; the read from sizeOf(a) joins b's flight; the one from sizeOf(c) hits.
    expect(table.stats()).toMatchObject({ hits: 1, misses: 4, coalesced: 1, flights: 3 })
    await table.close()
  })

  it.each(['invalidate', 'clear'] as const)('after %s was applied, does not join the flight it fenced', async (change) => {
    const origin = latched()
    let after: Promise<string> | undefined
    const table = createTable<string, Id>({
      clock: manualClock(0),
      inspect: around(
        change,
        () => void read(table, 'a', origin.loader),
        () => (after = read(table, 'a', origin.loader)),
      ),
    })
    const first = table.fetch('a', origin.loader)
    await flightStarted()
    if (change === 'invalidate') expect((await table.invalidate('a')).applied).toBe(true)
    else await table.clear()
    origin.releases[0]!('before the change')
    expect(await first).toBe('before the change')
    await settle()
    expect(origin.releases, 'a new flight was started for the read after the change').toHaveLength(2)
    origin.releases[1]!('after the change')
    expect(await after).toBe('after the change')
    await table.close()
  })

  it('after the coalescing gate was turned off, starts a flight of its own', async () => {
    const origin = latched()
    const reads: Promise<string>[] = []
    const table = createTable<string, Id>({
      clock: manualClock(0),
      inspect: around(
        'put',
        () => {},
        () => {
          table.setCoalescing(false)
          reads.push(read(table, 'a', origin.loader), read(table, 'a', origin.loader))
        },
      ),
    })
    const first = table.fetch('a', origin.loader)
    await flightStarted()
    await table.put('b', 'B')
    await settle()
    expect(origin.releases, "each read made after the gate closed has a flight of its own: a's first flight and two more").toHaveLength(3)
    origin.releases.forEach((release, i) => release(`load ${i}`))
    expect(await first).toBe('load 0')
    expect(await Promise.all(reads)).toEqual(['load 1', 'load 2'])
    expect(table.stats()).toMatchObject({ flights: 3, coalesced: 0 })
    await table.close()
  })
})
