/**
 * W12's child process: one instance of one contender serving its part of the day. Spawned by
 * bench/workloads/w12-day.ts as `node --import tsx bench/w12-day-child.ts` with an IPC channel
 * (advanced serialization, so typed arrays cross it whole).
 *
 * `setup` builds the contender's cache (connecting to Redis in the four-instance shape) and the
 * day's trace, then answers `ready`. `go {t0}` starts the day at the epoch instant t0: each event
 * addressed to this instance fires at its instant (a read calls the cache; an update asks the
 * origin to change the row, then calls the cache's invalidate). The origin lives in the parent:
 * a load is an `origin` request answered over IPC. Once every event has fired and every read has
 * settled (or 5 s passed), the child sends `done` with each read's instants, latency and the
 * version it returned, each update's version and finish instant, and its CPU time. `exit` closes
 * the cache and ends the process. Nothing is written on stdout.
 */
import { performance } from 'node:perf_hooks'
import { dayContenders } from './contenders/day/index.js'
import type { DayCache, SharedRedis, StockRow } from './contenders/day/types.js'
import { buildTrace, dayPlan, KEYS, keyId, READ, UPDATE, UPDATE_THEN_READ } from './workloads/w12-trace.js'

/** What the parent sends. */
export type ToDayChild =
  | { type: 'setup'; contender: string; variant: number; instance: number; instances: number; full: boolean; redis?: SharedRedis; capacity: number; grace: number; loadDeadline: number }
  | { type: 'go'; t0: number }
  | { type: 'origin'; k: number; row?: StockRow; error?: string }
  | { type: 'updated'; k: number; version: number }
  | { type: 'exit' }

/** One instance's day, as typed arrays (instants in ms after t0). */
export interface DayReport {
  instance: number
  reads: {
    key: Int32Array
    /** When the read arrived (its trace instant, or for a pair's read, when the first update finished). */
    arrival: Float64Array
    /** When the cache was called. */
    started: Float64Array
    /** Arrival → answer, ms. */
    latency: Float64Array
    /** The version returned: −1 for a failed read (rejected or no value), 0 for a missing id's answer. */
    version: Int32Array
    /** When the origin read the value returned (ms after t0). */
    loadedAt: Float64Array
    count: number
  }
  updates: { key: Int32Array; version: Int32Array; done: Float64Array; count: number; failed: number }
  /** Reads still unanswered when the child gave up waiting. */
  unsettled: number
  cpuMs: number
  /** Longest delay between an event's instant and its firing (event-loop lag). */
  lagMaxMs: number
  /** The cache's own counters after the day, where it keeps any. */
  counters: Record<string, number>
}

/** What the child sends. */
export type FromDayChild =
  | { type: 'ready' }
  | { type: 'origin'; k: number; key: number }
  | { type: 'update'; k: number; key: number }
  | { type: 'tick'; at: number; reads: number; pending: number }
  | { type: 'done'; report: DayReport }
  | { type: 'failed'; message: string }

const SETTLE_MS = 5_000
const now = () => performance.timeOrigin + performance.now()

function send(message: FromDayChild): void {
  if (process.connected) process.send!(message)
}

let cache: DayCache | undefined
let setup: Extract<ToDayChild, { type: 'setup' }> | undefined
const waiting = new Map<number, { resolve: (m: Extract<ToDayChild, { type: 'origin' | 'updated' }>) => void }>()
let nextRequest = 0

function ask(message: Omit<Extract<FromDayChild, { type: 'origin' | 'update' }>, 'k'>): Promise<Extract<ToDayChild, { type: 'origin' | 'updated' }>> {
  const k = nextRequest++
  return new Promise((resolve) => {
    waiting.set(k, { resolve })
    send({ ...message, k } as FromDayChild)
  })
}

async function runDay(t0: number): Promise<DayReport> {
  const s = setup!
  const plan = dayPlan(s.full)
  const trace = buildTrace(plan)
  const mine = (i: number) => s.instances === 1 || trace.instance[i] === s.instance
  let readSlots = 0
  let updateSlots = 0
  for (let i = 0; i < trace.length; i++) {
    if (!mine(i)) continue
    if (trace.kind[i] !== UPDATE) readSlots++
    if (trace.kind[i] !== READ) updateSlots++
  }
  const reads = {
    key: new Int32Array(readSlots),
    arrival: new Float64Array(readSlots),
    started: new Float64Array(readSlots),
    latency: new Float64Array(readSlots),
    version: new Int32Array(readSlots).fill(-1),
    loadedAt: new Float64Array(readSlots).fill(Number.NaN),
    count: 0,
  }
  const updates = { key: new Int32Array(updateSlots), version: new Int32Array(updateSlots), done: new Float64Array(updateSlots), count: 0, failed: 0 }
  const ids = new Array<string>(KEYS)
  for (let k = 0; k < KEYS; k++) ids[k] = keyId(k)
  const elapsed = () => now() - t0
  let pending = 0
  let settled: (() => void) | undefined
  let lagMaxMs = 0

  const read = (key: number, arrival: number) => {
    const slot = reads.count++
    const started = elapsed()
    reads.key[slot] = key
    reads.arrival[slot] = arrival
    reads.started[slot] = started
    pending++
    const finish = (row: StockRow | undefined) => {
      reads.latency[slot] = elapsed() - arrival
      if (row !== undefined && row.id === ids[key]) {
        reads.version[slot] = row.version
        reads.loadedAt[slot] = row.loadedAt - t0
      }
      if (--pending === 0) settled?.()
    }
    let answer: Promise<StockRow | undefined>
    try {
      answer = cache!.read(ids[key]!)
    } catch {
      answer = Promise.resolve(undefined)
    }
    answer.then(finish, () => finish(undefined))
  }
  const update = async (key: number, thenRead: boolean) => {
    pending++
    try {
      const answer = await ask({ type: 'update', key })
      await cache!.invalidate(ids[key]!)
      const slot = updates.count++
      updates.key[slot] = key
      updates.version[slot] = (answer as Extract<ToDayChild, { type: 'updated' }>).version
      updates.done[slot] = elapsed()
      if (thenRead) read(key, elapsed())
    } catch {
      updates.failed++
    } finally {
      if (--pending === 0) settled?.()
    }
  }

  const cpu = process.cpuUsage()
  let i = 0
  let nextTick = 1_000
  await new Promise<void>((dayOver) => {
    const pump = () => {
      const t = elapsed()
      while (i < trace.length && trace.at[i]! <= t) {
        if (mine(i)) {
          lagMaxMs = Math.max(lagMaxMs, t - trace.at[i]!)
          const kind = trace.kind[i]
          if (kind === READ) read(trace.key[i]!, trace.at[i]!)
          else void update(trace.key[i]!, kind === UPDATE_THEN_READ)
        }
        i++
      }
      if (t >= nextTick && (s.instance === 0 || s.instances === 1)) {
        send({ type: 'tick', at: t, reads: reads.count, pending })
        nextTick += 1_000
      }
      if (i < trace.length) setTimeout(arrive, Math.max(0, Math.min(trace.at[i]! - elapsed(), 1)))
      else dayOver()
    }
    // Events are handled after the I/O already received, as a request arriving on a socket would be:
    // a timer that fires late (a busy loop) runs before the poll, and would read ahead of a bus
    // message that reached this process first.
    const arrive = () => setImmediate(pump)
    setTimeout(arrive, Math.max(0, t0 - now()))
  })
  if (pending > 0) {
    await new Promise<void>((resolve) => {
      settled = resolve
      setTimeout(resolve, SETTLE_MS)
    })
  }
  const used = process.cpuUsage(cpu)
  return { instance: s.instance, reads, updates, unsettled: pending, cpuMs: (used.user + used.system) / 1000, lagMaxMs, counters: cache!.counters?.() ?? {} }
}

async function handle(message: ToDayChild): Promise<void> {
  switch (message.type) {
    case 'setup': {
      setup = message
      const plan = dayPlan(message.full)
      const contender = (await dayContenders(message.contender))[message.variant]
      if (contender === undefined) throw new Error(`no W12 adapter for ${message.contender} (variant ${message.variant})`)
      cache = await contender.create({
        ttl: plan.ttl,
        grace: message.grace,
        loadDeadline: message.loadDeadline,
        capacity: message.capacity,
        ...(message.redis !== undefined ? { redis: message.redis } : {}),
        load: async (id) => {
          const answer = (await ask({ type: 'origin', key: keyIndex(id) })) as Extract<ToDayChild, { type: 'origin' }>
          if (answer.error !== undefined) throw new Error(answer.error)
          return answer.row!
        },
      })
      send({ type: 'ready' })
      return
    }
    case 'go':
      send({ type: 'done', report: await runDay(message.t0) })
      return
    case 'origin':
    case 'updated': {
      const w = waiting.get(message.k)
      waiting.delete(message.k)
      w?.resolve(message)
      return
    }
    case 'exit':
      await stop(0)
      return
  }
}

let index: Map<string, number> | undefined
function keyIndex(id: string): number {
  if (index === undefined) {
    index = new Map()
    for (let k = 0; k < KEYS; k++) index.set(keyId(k), k)
  }
  const k = index.get(id)
  if (k === undefined) throw new Error(`the origin has no key for id ${JSON.stringify(id)}`)
  return k
}

let stopping: Promise<void> | undefined
function stop(code: number): Promise<void> {
  stopping ??= (async () => {
    // Some libraries keep timers or sockets after close: the process ends once the cache is closed (or 3 s passed), whatever they hold.
    setTimeout(() => process.exit(code), 3_000).unref()
    try {
      await cache?.close()
    } finally {
      process.exit(code)
    }
  })()
  return stopping
}

if (process.send === undefined) {
  process.stderr.write('w12-day-child.ts needs an IPC channel (it is spawned by bench/workloads/w12-day.ts)\n')
  process.exit(1)
}
process.on('message', (message: ToDayChild) => {
  handle(message).catch((error: unknown) => {
    const text = error instanceof Error ? (error.stack ?? error.message) : String(error)
    process.stderr.write(`${text}\n`)
    send({ type: 'failed', message: text })
    void stop(1)
  })
})
process.on('disconnect', () => void stop(stopping === undefined ? 1 : 0))
