import { once } from 'node:events'
import { Cluster, Redis } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { v8Codec } from '../src/l2/codec.js'
import { BUCKETS, bucketOf, entryKey, generationKey, l2Key, LONGEST_ENTRY_MS, VERSION_TTL_MS, versionKey } from '../src/l2/keys.js'
import { redisL2 } from '../src/redis/l2.js'
import { L2CorruptEntryError, L2UnfitValueError } from '../src/core/errors.js'
import { l2ContractSuite } from './l2-contract.js'
import { describeRedis, keysUnder, REDIS_URL, suiteRedis, testPrefix, redisKeyClock } from './support/redis.js'

const prefix = testPrefix('l2-redis')

describeRedis('redisL2 on Redis', () => {
  const raw = suiteRedis(prefix)

  describe('the L2Store contract', () => {
    l2ContractSuite(() => ({
      store: redisL2({ url: REDIS_URL, prefix }),
      // PEXPIREAT in the past deletes the key at once, exactly as its expiry would: no waiting.
      ...redisKeyClock(raw, prefix),
      peer: () => redisL2({ url: REDIS_URL, prefix }),
    }))
  })

  it('writes every key under the prefix: one data key per entry, one version key per counter, one generation key per bucket written', async () => {
    const own = `${prefix}scan:`
    const store = redisL2({ url: REDIS_URL, prefix: own })
    await store.set('emoji_sets', 'party', { kind: 'value', value: ['🎉'], version: 1, ttl: 60_000 })
    await store.set('a:b', 1, { kind: 'absent', version: 1, ttl: 60_000 })
    await store.nextVersion('emoji_sets', 'party', 0)
    await store.close()
    expect(await keysUnder(raw(), own)).toEqual(
      [l2Key(own, 'emoji_sets', 'party'), l2Key(own, 'a:b', 1), versionKey(own, 'emoji_sets', 'party'), generationKey(own, 'emoji_sets', 'party'), generationKey(own, 'a:b', 1)].sort(),
    )
    expect(l2Key(own, 'emoji_sets', 'party')).toBe(`${own}{[${bucketOf('emoji_sets', 'party')},"emoji_sets"]}"party"`)
  })

  it('stores a small header then the payload, with PX ttl', async () => {
    const store = redisL2({ url: REDIS_URL, prefix })
    await store.set('hdr', 'a', { kind: 'value', value: { x: 1 }, version: 42, ttl: 5_000 })
    await store.set('hdr', 'b', { kind: 'tombstone', version: 7, ttl: 5_000 })
    expect((await raw().getBuffer(l2Key(prefix, 'hdr', 'a')))?.toString()).toBe('v42:{"x":1}')
    expect((await raw().getBuffer(l2Key(prefix, 'hdr', 'b')))?.toString()).toBe('t7:')
    const pttl = await raw().pttl(l2Key(prefix, 'hdr', 'a'))
    expect(pttl).toBeGreaterThan(0)
    expect(pttl).toBeLessThanOrEqual(5_000)
    await store.close()
  })

  it('gives the version key a long expiry, renewed by each nextVersion', async () => {
    const store = redisL2({ url: REDIS_URL, prefix })
    await store.nextVersion('ver', 'a', 0)
    await store.set('ver', 'a', { kind: 'value', value: 1, version: 1, ttl: 5_000 })
    const pttl = await raw().pttl(versionKey(prefix, 'ver', 'a'))
    expect(pttl).toBeGreaterThan(VERSION_TTL_MS - 60_000)
    expect(pttl).toBeLessThanOrEqual(VERSION_TTL_MS)
    expect(await store.nextVersion('ver', 'a', 0)).toBe(2)
    await store.close()
  })

  it('keeps versions ordered under racing writers: the highest version wins', async () => {
    const store = redisL2({ url: REDIS_URL, prefix })
    const versions = [5, 1, 9, 3, 20, 7, 2, 11, 19, 4]
    const written = await Promise.all(versions.map((version) => store.set('race', 'r', { kind: 'value', value: version, version, ttl: 5_000 })))
    expect(written).toContain(true)
    expect((await store.get('race', 'r'))?.version).toBe(20)
    await store.close()
  })

  it('round-trips Map, Set, Date, BigInt and undefined through Redis with v8Codec', async () => {
    const store = redisL2({ url: REDIS_URL, prefix: `${prefix}v8:`, codec: v8Codec })
    const value = {
      map: new Map<unknown, unknown>([
        ['a', 1],
        [2, new Date(0)],
      ]),
      set: new Set([1n, 2n]),
      when: new Date(1_700_000_000_000),
      big: 2n ** 70n,
      nothing: undefined,
    }
    await store.set('v8', 'x', { kind: 'value', value, version: 1, ttl: 5_000 })
    const entry = await store.get('v8', 'x')
    expect(entry?.value).toEqual(value)
    expect((entry!.value as typeof value).map).toBeInstanceOf(Map)
    expect((entry!.value as typeof value).big).toBe(2n ** 70n)
    await store.set('v8', 'u', { kind: 'value', value: undefined, version: 1, ttl: 5_000 })
    expect(await store.get('v8', 'u')).toMatchObject({ kind: 'value', value: undefined })
    await store.close()
  })

  it('rejects a value the codec cannot carry (a BigInt, a cycle) with L2UnfitValueError, and writes nothing', async () => {
    const store = redisL2({ url: REDIS_URL, prefix })
    const cycle: Record<string, unknown> = {}
    cycle.self = cycle
    for (const value of [1n, cycle]) {
      const error = await store.set('enc', 'big', { kind: 'value', value, version: 1, ttl: 5_000 }).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(L2UnfitValueError)
      expect(error).toMatchObject({ code: 'ECHOSTORE_L2_UNFIT', reason: 'codec', key: l2Key(prefix, 'enc', 'big') })
    }
    expect(await raw().exists(l2Key(prefix, 'enc', 'big'))).toBe(0)
    await store.close()
  })

  it('neither writes nor reads across the wire an entry larger than maxValueBytes', async () => {
    const small = redisL2({ url: REDIS_URL, prefix, maxValueBytes: 1_000 })
    const large = redisL2({ url: REDIS_URL, prefix })
    const big = 'x'.repeat(2_000)
    await expect(small.set('size', 'a', { kind: 'value', value: big, version: 1, ttl: 5_000 })).rejects.toMatchObject({ code: 'ECHOSTORE_L2_UNFIT', reason: 'size' })
    expect(await raw().exists(l2Key(prefix, 'size', 'a'))).toBe(0)
    expect(await small.set('size', 'a', { kind: 'value', value: 'x'.repeat(900), version: 1, ttl: 5_000 })).toBe(true)
    expect(await large.set('size', 'b', { kind: 'value', value: big, version: 1, ttl: 5_000 })).toBe(true)
    const error = await small.get('size', 'b').catch((e: unknown) => e)
    expect(error).toBeInstanceOf(L2UnfitValueError)
    expect(error).toMatchObject({ code: 'ECHOSTORE_L2_UNFIT', reason: 'size' })
    expect((await large.get('size', 'b'))?.value).toBe(big)
    for (const bad of [0, 1.5, -1, '1k']) expect(() => redisL2({ url: REDIS_URL, prefix, maxValueBytes: bad as number })).toThrow(/maxValueBytes/)
    await Promise.all([small.close(), large.close()])
  })

  it('repairs a garbage version key (not a number, another type, out of range) on the next mint', async () => {
    const store = redisL2({ url: REDIS_URL, prefix })
    const garbage: [string, () => Promise<unknown>][] = [
      ['text', () => raw().set(versionKey(prefix, 'vk', 'text'), 'not a number')],
      ['hash', () => raw().hset(versionKey(prefix, 'vk', 'hash'), 'a', '1')],
      ['huge', () => raw().set(versionKey(prefix, 'vk', 'huge'), '9007199254740993')],
    ]
    for (const [id, plant] of garbage) {
      await plant()
      expect(await store.nextVersion('vk', id, 10)).toBe(10)
      expect(await store.nextVersion('vk', id, 10)).toBe(11)
    }
    await store.close()
  })

  it('keeps a cleared table’s entries under keys of their bucket’s generation; a garbage generation key fails reads in its bucket until a clear repairs it', async () => {
    const own = `${prefix}gen:`
    const store = redisL2({ url: REDIS_URL, prefix: own })
    await store.set('t', 'a', { kind: 'value', value: 'gen 0', version: 1, ttl: 60_000 })
    await store.clear('t')
    await store.set('t', 'a', { kind: 'value', value: 'gen 1', version: 1, ttl: 60_000 })
    // A clear moves the generation of every bucket (one without a generation key may hold entries older writes left).
    const keys = await keysUnder(raw(), own)
    expect(keys.filter((key) => !key.endsWith(':gen')).sort()).toEqual([l2Key(own, 't', 'a'), entryKey(own, 't', 'a', 1)].sort())
    expect(keys.filter((key) => key.endsWith(':gen'))).toHaveLength(BUCKETS)
    const bucket = bucketOf('t', 'a')
    expect(entryKey(own, 't', 'a', 1)).toBe(`${own}{[${bucket},"t"]}"a":1`)
    expect(generationKey(own, 't', 'a')).toBe(`${own}{[${bucket},"t"]}:gen`)
    expect(await raw().get(generationKey(own, 't', 'a'))).toBe('1')

    // An id of the same bucket, and one of another.
    const sibling = Array.from({ length: 100_000 }, (_, n) => `b${n}`).find((id) => bucketOf('t', id) === bucket)!
    const stranger = Array.from({ length: 100 }, (_, n) => `c${n}`).find((id) => bucketOf('t', id) !== bucket)!
    await store.set('t', stranger, { kind: 'value', value: 'elsewhere', version: 1, ttl: 60_000 })
    for (const plant of [() => raw().set(generationKey(own, 't', 'a'), 'not a number'), () => raw().hset(generationKey(own, 't', 'a'), 'a', '1')]) {
      await raw().del(generationKey(own, 't', 'a'))
      await plant()
      await expect(store.get('t', 'a')).rejects.toBeInstanceOf(L2CorruptEntryError)
      expect((await store.get('t', stranger))?.value).toBe('elsewhere')
      expect(await store.set('t', sibling, { kind: 'value', value: 'b', version: 1, ttl: 60_000 })).toBe(true)
      await store.clear('t') // past every generation the bucket had: the server's clock in ms
      expect(await store.get('t', 'a')).toBeUndefined()
      expect(await store.get('t', sibling)).toBeUndefined()
      expect(await store.get('t', stranger)).toBeUndefined()
      expect(Number(await raw().get(generationKey(own, 't', 'a')))).toBeGreaterThan(Date.now() - 60_000)
      await store.set('t', stranger, { kind: 'value', value: 'elsewhere', version: 1, ttl: 60_000 })
    }
    await store.close()
  })

  it('hides at a clear an entry whose bucket has no generation key (written before writes kept one)', async () => {
    const own = `${prefix}nogen:`
    const store = redisL2({ url: REDIS_URL, prefix: own })
    await store.set('t', 'a', { kind: 'value', value: 'before the clear', version: 1, ttl: 60_000 })
    await raw().del(generationKey(own, 't', 'a'))
    expect(await store.get('t', 'a')).toMatchObject({ value: 'before the clear' })
    await store.clear('t')
    expect(await store.get('t', 'a')).toBeUndefined()
    await store.close()
  })

  it('gives every key it writes an expiry: a bucket’s generation key outlives the entries it hides, no longer, and a clear gives a bucket without one the longest an entry lives', async () => {
    const own = `${prefix}expiry:`
    const store = redisL2({ url: REDIS_URL, prefix: own })
    /** Every key under the store's prefix with its PTTL. */
    const ttls = async () => Object.fromEntries(await Promise.all((await keysUnder(raw(), own)).map(async (key) => [key, await raw().pttl(key)] as const)))
    await store.clear('empty') // no bucket has a generation key: each may hold entries an older release wrote, so each gets one
    const empty = Object.values(await ttls())
    expect(empty).toHaveLength(BUCKETS)
    expect(empty.every((pttl) => pttl > LONGEST_ENTRY_MS - 60_000 && pttl <= LONGEST_ENTRY_MS)).toBe(true)
    await raw().del(...(await keysUnder(raw(), own)))
    await store.set('t', 'a', { kind: 'value', value: 'gen 0', version: 1, ttl: 60_000, grace: 30_000 })
    await store.set('t', 'short', { kind: 'value', value: 'gen 0', version: 1, ttl: 1_000 })
    await store.clear('t')
    const gen = generationKey(own, 't', 'a')
    let held = await ttls()
    expect(Object.values(held).every((pttl) => pttl > 0)).toBe(true)
    // The buckets written keep their generation key's expiry, as long as the longest entry it hides; every other bucket's lives as long as the longest entry.
    const written = [gen, generationKey(own, 't', 'short')]
    const generations = Object.keys(held).filter((key) => key.endsWith(':gen'))
    expect(generations).toHaveLength(BUCKETS)
    expect(generations.filter((key) => held[key]! < LONGEST_ENTRY_MS - 60_000).sort()).toEqual(written.sort())
    expect(held[gen]).toBeGreaterThanOrEqual(held[l2Key(own, 't', 'a')]! - 5)
    expect(held[gen]).toBeLessThanOrEqual(90_000)
    expect(await store.get('t', 'a')).toBeUndefined()
    // An entry of the new generation that lives longer carries its generation key with it.
    await store.set('t', 'a', { kind: 'value', value: 'gen 1', version: 1, ttl: 600_000 })
    held = await ttls()
    expect(held[gen]).toBeGreaterThan(590_000)
    expect(held[gen]).toBeLessThanOrEqual(600_000)
    // A tombstone, a lease and a version counter expire too.
    await store.set('t', 'b', { kind: 'tombstone', version: 2, ttl: 5_000 })
    await store.leases!.acquire('t', 'c', 'token', 3_000)
    await store.nextVersion('t', 'd', 0)
    expect(Object.entries(await ttls()).filter(([, pttl]) => pttl <= 0)).toEqual([])
    // A generation key written without an expiry (by an older version) gets the longest an entry lives at its next clear.
    await raw().set(generationKey(own, 'old', 'x'), '3')
    await store.clear('old')
    expect(await raw().get(generationKey(own, 'old', 'x'))).toBe('4')
    expect(await raw().pttl(generationKey(own, 'old', 'x'))).toBeGreaterThan(LONGEST_ENTRY_MS - 60_000)
    await store.close()
  })

  describe('a corrupt entry makes get reject with L2CorruptEntryError', () => {
    const cases: [string, string | Buffer][] = [
      ['no header', 'garbage'],
      ['an unknown kind', 'x1:{}'],
      ['malformed JSON', 'v1:{"a":'],
      ['JSON holding __proto__', 'v1:{"__proto__":{"polluted":1}}'],
      ['JSON holding constructor.prototype', 'v1:{"a":[{"constructor":{"prototype":{"polluted":1}}}]}'],
      ['an escaped __proto__ key', 'v1:{"\\u005f_proto__":{"polluted":1}}'],
      ['a version above 2^52', 'v9007199254740993:1'],
    ]
    it.each(cases)('%s', async (_label, payload) => {
      const store = redisL2({ url: REDIS_URL, prefix })
      const key = l2Key(prefix, 'corrupt', _label)
      await raw().set(key, payload, 'PX', 5_000)
      const error = await store.get('corrupt', _label).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(L2CorruptEntryError)
      expect(error).toMatchObject({ code: 'ECHOSTORE_L2_CORRUPT', key })
      expect(({} as Record<string, unknown>).polluted).toBeUndefined()
      expect(Object.prototype).not.toHaveProperty('polluted')
      // A write replaces the unreadable entry (its header, when readable, still fences lower versions).
      expect(await store.set('corrupt', _label, { kind: 'value', value: 'fixed', version: 1, ttl: 5_000 })).toBe(true)
      expect((await store.get('corrupt', _label))?.value).toBe('fixed')
      await store.close()
    })

    it('a v8 payload that does not deserialise', async () => {
      const store = redisL2({ url: REDIS_URL, prefix, codec: v8Codec })
      await raw().set(l2Key(prefix, 'corrupt', 'v8'), Buffer.from([0x76, 0x31, 0x3a, 0xff, 0x0f, 0x6f, 0x22]), 'PX', 5_000)
      await expect(store.get('corrupt', 'v8')).rejects.toBeInstanceOf(L2CorruptEntryError)
      await store.close()
    })

    it('a key of another Redis type: a read is a corrupt miss, and the next write replaces it', async () => {
      const store = redisL2({ url: REDIS_URL, prefix })
      await raw().rpush(l2Key(prefix, 'corrupt', 'list'), 'a', 'b')
      await expect(store.get('corrupt', 'list')).rejects.toBeInstanceOf(L2CorruptEntryError)
      expect(await store.set('corrupt', 'list', { kind: 'value', value: 'fixed', version: 1, ttl: 5_000 })).toBe(true)
      expect((await store.get('corrupt', 'list'))?.value).toBe('fixed')
      await store.close()
    })

    it('a key without expiry (not written by a store)', async () => {
      const store = redisL2({ url: REDIS_URL, prefix })
      await raw().set(l2Key(prefix, 'corrupt', 'persist'), 'v1:1')
      await expect(store.get('corrupt', 'persist')).rejects.toBeInstanceOf(L2CorruptEntryError)
      await store.close()
    })
  })

  it('with a given client: uses it, and close() leaves it open', async () => {
    const client = new Redis(REDIS_URL)
    await once(client, 'ready') // a given client is used once ready: calls before are refused, as during an outage
    const store = redisL2({ client, prefix })
    await store.set('given', 'a', { kind: 'value', value: 'shared', version: 1, ttl: 5_000 })
    expect((await store.get('given', 'a'))?.value).toBe('shared')
    await store.close()
    await store.close()
    expect(await client.ping()).toBe('PONG')
    await client.quit()
  })

  it('with a url: close() ends the connection it opened', async () => {
    const store = redisL2({ url: REDIS_URL, prefix })
    expect(await store.get('own', 'a')).toBeUndefined()
    await store.close()
    await expect(store.get('own', 'a')).rejects.toThrow(/close/)
  })

  it('accepts a Cluster client without connecting it', async () => {
    const cluster = new Cluster([{ host: '127.0.0.1', port: 6379 }], { lazyConnect: true })
    const store = redisL2({ client: cluster, prefix })
    await store.close()
    expect(cluster.status).toBe('wait')
    cluster.disconnect()
  })

  it('fails fast, without crashing, when nothing listens at the url: the error names the host and carries the refusal', async () => {
    const store = redisL2({ url: 'redis://127.0.0.1:1', prefix, onError: () => {} })
    const error = await store.get('down', 'a').catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'ECHOSTORE_REDIS_UNREACHABLE', host: '127.0.0.1:1', cause: { code: 'ECONNREFUSED' } })
    expect(String((error as Error).message)).toMatch(/127\.0\.0\.1:1 .*ECONNREFUSED/)
    await expect(store.set('down', 'a', { kind: 'value', value: 1, version: 1, ttl: 5_000 })).rejects.toMatchObject({ code: 'ECHOSTORE_REDIS_UNREACHABLE' })
    expect(store.cause!('down', 'a')).toMatchObject({ code: 'ECONNREFUSED' })
    await store.close()
  })
})

describe('redisL2 options', () => {
  it('needs exactly one of client, url and sentinels, naming them', () => {
    expect(() => redisL2({})).toThrow(TypeError)
    expect(() => redisL2({})).toThrow(/`client`, `url` and `sentinels`, got neither/)
    const client = new Redis({ lazyConnect: true })
    expect(() => redisL2({ client, url: REDIS_URL })).toThrow(/got `client` and `url`/)
    expect(() => redisL2({ url: REDIS_URL, sentinels: [{ host: '127.0.0.1', port: 1 }], name: 'm' })).toThrow(/got `url` and `sentinels`/)
    expect(() => redisL2({ sentinels: [{ host: '127.0.0.1', port: 1 }] })).toThrow(/`name`/)
    expect(() => redisL2({ sentinels: [], name: 'm' })).toThrow(/`sentinels`/)
    expect(() => redisL2({ url: REDIS_URL, name: 'm' })).toThrow(/`name` goes with `sentinels`/)
    expect(() => redisL2({ url: [] })).toThrow(/`url`/)
    expect(() => redisL2({ url: ['redis://127.0.0.1:1', 'http://x'] })).toThrow(/`url`/)
    client.disconnect()
  })

  it.each(['{', '}', 'a{b}:', '{}', 'x{}:', 'tenant{1}:'])('refuses the prefix %j, which would break Redis Cluster slot hashing, naming `prefix`', (bad) => {
    expect(() => redisL2({ url: REDIS_URL, prefix: bad })).toThrow(/`prefix`.*slot hashing/)
    const client = new Redis({ lazyConnect: true, keyPrefix: bad })
    expect(() => redisL2({ client })).toThrow(/`prefix`.*keyPrefix/)
    client.disconnect()
  })

  it('names a bad client, url, prefix or codec', () => {
    expect(() => redisL2({ client: {} as never })).toThrow(/`client`/)
    expect(() => redisL2({ url: '' })).toThrow(/`url`/)
    expect(() => redisL2({ url: REDIS_URL, prefix: 7 as never })).toThrow(/`prefix`/)
    expect(() => redisL2({ url: REDIS_URL, prefix: 'bad\ud800' })).toThrow(/`prefix`/)
    expect(() => redisL2({ url: REDIS_URL, codec: { encode: JSON.stringify } as never })).toThrow(/`codec`/)
  })

  it("carries the timeout option as the store's timeout, and names a bad one", async () => {
    const client = new Redis({ lazyConnect: true })
    expect(redisL2({ client, timeout: 25 }).timeout).toBe(25)
    expect(redisL2({ client }).timeout).toBeUndefined()
    expect(() => redisL2({ client, timeout: 0 })).toThrow(/`timeout`/)
    expect(() => redisL2({ client, timeout: Number.NaN })).toThrow(RangeError)
    client.disconnect()
  })
})
