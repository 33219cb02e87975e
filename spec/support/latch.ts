import type { BatchAnswer, BatchLoaderContext, Id, LoaderContext } from '../../src/index.js'
import type { ManualClock } from '../../src/testing.js'

/** One call of a {@link latchedLoader}: its id, its context, and the switches that settle it. */
export interface LatchedCall<V> {
  id: Id
  context: LoaderContext
  resolve(value: V): void
  reject(error: unknown): void
}

/**
 * A loader whose calls never settle on their own: the test releases each one, so concurrency is
 * decided by the test, never by timing (a fast origin hides duplicate fills).
 */
export function latchedLoader<V>() {
  const calls: LatchedCall<V>[] = []
  const loader = (id: Id, context: LoaderContext) =>
    new Promise<V>((resolve, reject) => {
      calls.push({ id, context, resolve, reject })
    })
  return {
    loader,
    calls,
    /** The only call so far; fails the test if there were more or none. */
    only(): LatchedCall<V> {
      if (calls.length !== 1) throw new Error(`expected exactly one loader call, saw ${calls.length}`)
      return calls[0]!
    },
  }
}

/** Lets every queued promise reaction and message run (one macrotask turn). */
export function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve))
}

/** Records how a promise settled, without ever leaving a rejection unhandled. */
export function outcome<T>(promise: Promise<T>): { readonly state: 'pending' | 'fulfilled' | 'rejected'; readonly value?: T; readonly error?: unknown } {
  const box: { state: 'pending' | 'fulfilled' | 'rejected'; value?: T; error?: unknown } = { state: 'pending' }
  promise.then(
    (value) => Object.assign(box, { state: 'fulfilled', value }),
    (error) => Object.assign(box, { state: 'rejected', error }),
  )
  return box
}

/**
 * Moves `clock` forward `ms`, one due timer at a time, letting promises settle after each: what
 * real time does (a loader answered at 10 ms lands before a deadline due at 60 ms).
 */
export async function advanceSettled(clock: ManualClock, ms: number): Promise<void> {
  const target = clock.now() + ms
  for (let due = clock.nextDue(); due !== undefined && due <= target; due = clock.nextDue()) {
    clock.set(due)
    await settle()
  }
  clock.set(target)
  await settle()
}

/** One call of a {@link latchedBatchLoader}: its ids, its context, and the switches that settle it. */
export interface LatchedBatchCall<V> {
  ids: Id[]
  context: BatchLoaderContext<Id>
  resolve(answer: BatchAnswer<V, Id>): void
  reject(error: unknown): void
}

/** A batch loader whose calls never settle on their own: the test answers each one. */
export function latchedBatchLoader<V>() {
  const calls: LatchedBatchCall<V>[] = []
  const loader = (ids: Id[], context: BatchLoaderContext<Id>) =>
    new Promise<BatchAnswer<V, Id>>((resolve, reject) => {
      calls.push({ ids, context, resolve, reject })
    })
  return {
    loader,
    calls,
    /** The only call so far; fails the test if there were more or none. */
    only(): LatchedBatchCall<V> {
      if (calls.length !== 1) throw new Error(`expected exactly one batch loader call, saw ${calls.length}`)
      return calls[0]!
    },
  }
}
