/**
 * The Redis L2's scripts touch only the keys they declare, in a cleared bucket too: a caller names
 * the entry key of the generation it expects, and a script finding the bucket in another one answers
 * that generation for the caller to ask again. What Redis runs is watched with `MONITOR` (which shows
 * the commands a script makes, as `lua`): every key a script's own commands touch must be one of
 * the keys its `EVALSHA` declared. A Redis Cluster routes a script, and refuses one during a slot
 * migration, by its declared keys only, so a key touched but not declared may already be on another
 * master (the slot-migration specs in `redis-failover.spec.ts` show what that did).
 */
import { once } from 'node:events'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { generationKey, entryKey, leaseKey, versionKey } from '../src/l2/keys.js'
import { redisL2, type RedisL2 } from '../src/redis/l2.js'
import { describeRedis, REDIS_URL, suiteRedis, testPrefix } from './support/redis.js'

const prefix = testPrefix('l2-declared-keys')

/** One command Redis ran, as `MONITOR` tells it: its words, and whether a script ran it. */
interface Ran {
  args: string[]
  byScript: boolean
}

/** A script's call and the commands it made. */
interface ScriptRun {
  declared: string[]
  touched: string[]
}

describeRedis('the Redis L2’s scripts in a cleared bucket', () => {
  const raw = suiteRedis(prefix)
  let monitor: Redis
  /** What Redis ran under this spec's prefix since {@link ranBy} began. */
  let seen: Ran[] = []
  let marker: ((args: string[]) => void) | undefined

  beforeAll(async () => {
    monitor = await new Redis(REDIS_URL).monitor()
    monitor.on('monitor', (_time: string, args: string[], source: string) => {
      if (!args.some((arg) => typeof arg === 'string' && arg.startsWith(prefix))) return
      if (args[0]?.toLowerCase() === 'get' && args[1]?.startsWith(`${prefix}marker:`)) return marker?.(args)
      seen.push({ args, byScript: source === 'lua' })
    })
  })
  afterAll(async () => {
    monitor.disconnect()
  })

  /** Sends a marker command and waits until `MONITOR` told it: everything Redis ran before it has been told too. */
  async function mark(): Promise<void> {
    const name = `${prefix}marker:${Math.random()}`
    const heard = new Promise<void>((resolve) => {
      marker = (args) => args[1] === name && resolve()
    })
    await raw().get(name)
    await heard
  }

  /** What Redis ran for `act`: between two markers, so nothing ran before it (told late) is counted, and everything it made is. */
  async function ranBy(act: () => Promise<unknown>): Promise<Ran[]> {
    await mark()
    seen = []
    await act()
    await mark()
    return seen
  }

  /**
   * The scripts among `commands`, each with the keys its own commands touched: Redis tells a
   * script's call first, then the commands it makes (a script runs alone: nothing comes between).
   */
  function scriptRuns(commands: readonly Ran[]): ScriptRun[] {
    const runs: ScriptRun[] = []
    for (const { args, byScript } of commands) {
      if (byScript) {
        expect(runs.length, `${args.join(' ')}: a script's command before any script's call`).toBeGreaterThan(0)
        if (args[0]!.toUpperCase() !== 'TIME') runs.at(-1)!.touched.push(args[1]!)
        continue
      }
      const command = args[0]!.toLowerCase()
      if (command === 'evalsha' || command === 'eval') runs.push({ declared: args.slice(3, 3 + Number(args[2])), touched: [] })
    }
    return runs
  }

  /** A store on this spec's prefix. */
  const stores: RedisL2[] = []
  function store(): RedisL2 {
    const made = redisL2({ url: REDIS_URL, prefix })
    stores.push(made)
    return made
  }
  afterAll(async () => {
    await Promise.all(stores.map((made) => made.close()))
  })

  it('every call, made by a store that saw the clear or by one that did not, touches only keys it declared', async () => {
    const writer = store()
    const unaware = store()
    const entry = { kind: 'value', value: 'before', version: 1, ttl: 60_000 } as const
    await writer.set('t', 'a', entry)
    await unaware.get('t', 'a') // its guess: generation 0
    await writer.clear('t')
    const calls: [string, (s: RedisL2) => Promise<unknown>][] = [
      ['set', (s) => s.set('t', 'a', { ...entry, value: 'after', version: 2 })],
      ['get', (s) => s.get('t', 'a')],
      ['getMany', (s) => s.getMany!('t', ['a', 'b'])],
      ['nextVersion', (s) => s.nextVersion('t', 'a', 0)],
      ['leases.readOrAcquire', (s) => s.leases!.readOrAcquire!('t', 'c', 'token', 5_000, 0)],
      ['leases.setAndRelease', (s) => s.leases!.setAndRelease!('t', 'c', { ...entry, version: 3 }, 'token')],
    ]
    for (const [name, call] of calls) {
      for (const [who, s] of [
        ['the store that cleared', writer],
        ['a store that did not see the clear', unaware],
      ] as const) {
        const runs = scriptRuns(await ranBy(() => call(s)))
        expect(runs.length, `${name} by ${who}`).toBeGreaterThan(0)
        for (const run of runs) {
          for (const key of run.touched) expect(run.declared, `${name} by ${who} touched ${key}`).toContain(key)
        }
      }
    }
    // The keys of the generation the clear began were among them.
    expect(await writer.get('t', 'a')).toMatchObject({ value: 'after', version: 2 })
    expect(await raw().exists(entryKey(prefix, 't', 'a', 1))).toBe(1)
  })

  it('a store that did not see a clear asks once more, in the generation the script answers, then names that one first', async () => {
    const writer = store()
    const unaware = store()
    const entry = { kind: 'value', value: 'before', version: 1, ttl: 60_000 } as const
    await writer.set('u', 'a', entry)
    expect(await unaware.get('u', 'a')).toMatchObject({ value: 'before' })
    await writer.clear('u')
    await writer.set('u', 'a', { ...entry, value: 'after', version: 2 })

    const first = scriptRuns(await ranBy(() => unaware.get('u', 'a')))
    expect(first.map((run) => run.declared)).toEqual([
      [generationKey(prefix, 'u', 'a'), entryKey(prefix, 'u', 'a', 0)],
      [generationKey(prefix, 'u', 'a'), entryKey(prefix, 'u', 'a', 1)],
    ])
    const again = scriptRuns(await ranBy(() => unaware.set('u', 'a', { ...entry, value: 'again', version: 3 })))
    expect(again.map((run) => run.declared)).toEqual([[generationKey(prefix, 'u', 'a'), entryKey(prefix, 'u', 'a', 1)]])
    // The store that cleared learnt every bucket's generation from the clear itself.
    const cleared = scriptRuns(await ranBy(() => writer.nextVersion('u', 'a', 0)))
    expect(cleared.map((run) => run.declared)).toEqual([[versionKey(prefix, 'u', 'a'), generationKey(prefix, 'u', 'a'), entryKey(prefix, 'u', 'a', 1)]])
    const lease = scriptRuns(await ranBy(() => unaware.leases!.readOrAcquire!('u', 'a', 'token', 5_000, 0)))
    expect(lease.map((run) => run.declared)).toEqual([[generationKey(prefix, 'u', 'a'), entryKey(prefix, 'u', 'a', 1), leaseKey(prefix, 'u', 'a')]])
  })

  it('a call whose bucket moves to another generation every time it asks gives up after four asks, naming the id, and writes nothing', async () => {
    const writer = store()
    await writer.set('w', 'a', { kind: 'value', value: 'kept', version: 1, ttl: 60_000 })
    const genKey = generationKey(prefix, 'w', 'a')
    const mover = new Redis(REDIS_URL)
    let asks = 0
    /** A client whose every script call is preceded by a move of the bucket's generation (as a clear makes). */
    class MovedBeforeEveryAsk extends Redis {
      override defineCommand(name: string, definition: { lua: string; numberOfKeys?: number }): void {
        super.defineCommand(name, definition)
        const self = this as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>
        const ask = self[name]!
        self[name] = async (...args: unknown[]) => {
          asks++
          await mover.incr(genKey)
          return ask.apply(this, args)
        }
      }
    }
    const client = new MovedBeforeEveryAsk(REDIS_URL)
    await once(client, 'ready')
    const unlucky = redisL2({ client, prefix })
    try {
      await expect(unlucky.set('w', 'a', { kind: 'value', value: 'lost', version: 9, ttl: 60_000 })).rejects.toThrow(/the bucket of id "a" of table "w" was cleared 4 times while the call asked/)
      expect(asks).toBe(4)
    } finally {
      await unlucky.close()
      client.disconnect()
      mover.disconnect()
    }
    // Nothing written, in any generation it was told of.
    for (let generation = 0; generation <= 5; generation++) {
      const held = await raw().get(entryKey(prefix, 'w', 'a', generation))
      if (held !== null) expect(held).toContain('kept')
    }
  })
})
