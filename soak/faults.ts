/**
 * The fault schedule: phase after phase, one fault is injected into one chaos store (the memory and
 * the Redis L2 take turns), held for most of the phase, then healed (`heal()` also releases every
 * stalled call). The faults come round in a fixed cycle, so a short run sees each of them; the
 * Redis store also has its real connection killed (`CLIENT KILL`), which ioredis must recover from.
 */
import type { ChaosL2 } from '../src/testing.js'
import type { RedisSide, SoakTable } from './world.js'

/** One fault: its name and how to inject it into a store. */
interface Fault {
  name: string
  /** Only for the Redis store. */
  redisOnly?: boolean
  inject(chaos: ChaosL2, redis: RedisSide | undefined): Promise<void> | void
}

/** The cycle of faults, in order. */
export const FAULTS: readonly Fault[] = [
  { name: 'get rejects', inject: (chaos) => chaos.fail('get', { kind: 'throw' }) },
  { name: 'every call throws synchronously', inject: (chaos) => chaos.fail('all', { kind: 'throw', sync: true }) },
  { name: 'get stalls until healed', inject: (chaos) => chaos.fail('get', { kind: 'stall' }) },
  { name: 'every call stalls 80 ms', inject: (chaos) => chaos.fail('all', { kind: 'stall', ms: 80 }) },
  { name: 'get returns garbage', inject: (chaos) => chaos.fail('get', { kind: 'corrupt' }) },
  { name: 'the next 20 sets reject with a non-Error', inject: (chaos) => chaos.fail('set', { kind: 'throw', error: Object.freeze({ not: 'an Error' }) }, { times: 20 }) },
  { name: 'nextVersion rejects', inject: (chaos) => chaos.fail('nextVersion', { kind: 'throw' }) },
  { name: 'connection killed', redisOnly: true, inject: (_, redis) => killConnection(redis!) },
]

/** Kills the Redis L2's own connection (found by its name); ioredis reconnects by itself. Throws when it is not connected. */
async function killConnection(redis: RedisSide): Promise<void> {
  const list = String(await redis.admin.call('CLIENT', 'LIST', 'TYPE', 'normal'))
  const ids = list
    .split('\n')
    .map((line) => Object.fromEntries(line.split(' ').map((field) => field.split('=', 2) as [string, string])))
    .filter((fields) => fields.name === redis.connectionName)
    .map((fields) => fields.id!)
  if (ids.length === 0) throw new Error('not connected')
  for (const id of ids) await redis.admin.client('KILL', 'ID', id)
}

/** What the schedule did. */
export class FaultCounts {
  /** Faults injected, by `<store>: <fault>`. */
  readonly injected: Record<string, number> = {}
  /** Heals (one after every fault, and one at the end). */
  heals = 0
  /** Stalled calls the heals released. */
  released = 0

  /** Faults injected in all. */
  get total(): number {
    return Object.values(this.injected).reduce((a, b) => a + b, 0)
  }
}

/**
 * Runs phases of `phaseMs` until `deadline` (a `performance.now()` time): the stores take turns,
 * each going through its cycle of faults (the Redis store's has the connection kill too); a fault
 * holds for 60% of its phase, then every store is healed, and the run ends healed. An injection
 * that could not be made (a kill while the connection is down) counts under
 * `<store>: <fault> (failed: <reason>)`.
 */
export async function runFaults(tables: readonly SoakTable[], redis: RedisSide | undefined, phaseMs: number, deadline: number, counts: FaultCounts): Promise<void> {
  const stores = tables.filter((t) => t.chaos !== undefined)
  const until = (t: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, Math.min(t, deadline) - performance.now())))
  const healAll = () => {
    for (const { chaos } of stores) {
      counts.released += chaos!.stalled
      chaos!.heal()
    }
    counts.heals++
  }
  const cycles = stores.map((s) => FAULTS.filter((f) => f.redisOnly !== true || s.label === 'redis'))
  for (let phase = 0; performance.now() < deadline; phase++) {
    const start = performance.now()
    const store = stores[phase % stores.length]!
    const cycle = cycles[phase % stores.length]!
    const fault = cycle[Math.floor(phase / stores.length) % cycle.length]!
    let name = `${store.label}: ${fault.name}`
    try {
      await fault.inject(store.chaos!, redis)
    } catch (error) {
      name += ` (failed: ${error instanceof Error ? error.message : String(error)})`
    }
    counts.injected[name] = (counts.injected[name] ?? 0) + 1
    await until(start + phaseMs * 0.6)
    healAll()
    await until(start + phaseMs)
  }
  healAll()
}
