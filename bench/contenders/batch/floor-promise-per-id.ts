import type { Row } from '../types.js'
import type { PageContender, PageReader, PageReaderOptions } from './types.js'

/** The floor's name in W11's tables: the least a reader that answers each id with a promise of its own can cost. */
export const PER_ID_FLOOR = 'floor: a promise per id'

/**
 * The floor of a read per id: a `Map` of rows and nothing else (no ttl, no capacity, no counting,
 * no checks). A hit is `Promise.resolve(row)`; a miss joins the id's pending promise, or queues the
 * id for the origin call of its tick, scheduled as DataLoader schedules its batch (after the promise
 * jobs of the tick). What `Promise.all(page.map(...))` over such a reader costs is what any reader
 * of a promise per id costs at least: EchoStore's `get` per id is measured against it.
 */
export const perIdFloor: PageContender = {
  name: PER_ID_FLOOR,
  kind: 'floor',
  pkgs: [],
  setup: 'a Map of rows; per id, Promise.resolve(row) on a hit, else its pending promise or one queued for the tick’s one origin call',
  create({ origin }: PageReaderOptions): PageReader {
    const rows = new Map<string, Row>()
    const pending = new Map<string, Promise<Row>>()
    let queued: { id: string; resolve: (row: Row) => void; reject: (error: unknown) => void }[] = []

    const flush = (): void => {
      const asked = queued
      queued = []
      origin(asked.map((q) => q.id)).then(
        (answer) => {
          for (let i = 0; i < asked.length; i++) {
            const { id, resolve } = asked[i]!
            rows.set(id, answer[i]!)
            pending.delete(id)
            resolve(answer[i]!)
          }
        },
        (error: unknown) => {
          for (const { id, reject } of asked) {
            pending.delete(id)
            reject(error)
          }
        },
      )
    }

    const miss = (id: string): Promise<Row> => {
      const joined = pending.get(id)
      if (joined !== undefined) return joined
      if (queued.length === 0) void Promise.resolve().then(() => process.nextTick(flush))
      const promise = new Promise<Row>((resolve, reject) => queued.push({ id, resolve, reject }))
      pending.set(id, promise)
      return promise
    }

    return {
      read: (ids) =>
        Promise.all(
          ids.map((id) => {
            const row = rows.get(id)
            return row !== undefined ? Promise.resolve(row) : miss(id)
          }),
        ),
      async close() {
        rows.clear()
      },
    }
  },
}
