/**
 * The numbers operations.md gives an operator, held to the values they name: the store timeout
 * (50 ms), the breaker (5 failures, 1 s), `PUBLISH_TIMEOUT` (1 s), `SUBSCRIBED_TIMEOUT` (10 s), the
 * default channel, `DEFAULT_MAX_VALUE_BYTES` (1 MiB, which a `redisL2` without the option
 * enforces), and the connection settings of `FAIL_FAST`, `CLUSTER_FAIL_FAST` and
 * `NODE_REDIS_FAIL_FAST`.
 */
import { Redis } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { BREAKER_COOLDOWN, BREAKER_FAILURES, DEFAULT_L2_TIMEOUT, PUBLISH_TIMEOUT } from '../src/limits.js'
import { CLUSTER_FAIL_FAST, DEFAULT_CHANNEL, DEFAULT_MAX_VALUE_BYTES, FAIL_FAST, NODE_REDIS_FAIL_FAST, SUBSCRIBED_TIMEOUT, redisBus, redisL2 } from '../src/redis.js'
import { REDIS_URL, cleanPrefix, describeRedis, testPrefix } from './support/redis.js'

describe('the limits', () => {
  it('store timeout 50 ms, breaker 5 failures and 1 s, publish 1 s, subscribed 10 s, values 1 MiB', () => {
    expect(DEFAULT_L2_TIMEOUT).toBe(50)
    expect(BREAKER_FAILURES).toBe(5)
    expect(BREAKER_COOLDOWN).toBe(1_000)
    expect(PUBLISH_TIMEOUT).toBe(1_000)
    expect(SUBSCRIBED_TIMEOUT).toBe(10_000)
    expect(DEFAULT_MAX_VALUE_BYTES).toBe(1024 * 1024)
    expect(DEFAULT_CHANNEL).toBe('echostore:coherence')
  })
})

describe('the connection settings', () => {
  it('FAIL_FAST: one retry per request, offline queue on, connect bound 1 s, backoff 50 ms × attempt capped at 1 s, reconnect on READONLY', () => {
    expect(FAIL_FAST).toMatchObject({ maxRetriesPerRequest: 1, enableOfflineQueue: true, connectTimeout: 1_000 })
    expect([1, 2, 10, 20, 21, 1_000].map(FAIL_FAST.retryStrategy)).toEqual([50, 100, 500, 1_000, 1_000, 1_000])
    expect(FAIL_FAST.reconnectOnError(new Error('READONLY You can not write against a read only replica.'))).toBeTruthy()
    expect(FAIL_FAST.reconnectOnError(new Error('ERR something else'))).toBe(false)
  })

  it('CLUSTER_FAIL_FAST: masters only, 100 ms retry delays, slot map refresh 1 s timeout and every 5 s, 16 redirections', () => {
    expect(CLUSTER_FAIL_FAST).toMatchObject({
      scaleReads: 'master',
      retryDelayOnFailover: 100,
      retryDelayOnClusterDown: 100,
      retryDelayOnTryAgain: 100,
      slotsRefreshTimeout: 1_000,
      slotsRefreshInterval: 5_000,
      maxRedirections: 16,
    })
  })

  it('NODE_REDIS_FAIL_FAST: connect bound 1 s, backoff (n + 1) × 50 ms capped at 1 s, 10 000 queued commands, a 4 MiB socket high-water mark', () => {
    expect(NODE_REDIS_FAIL_FAST.socket.connectTimeout).toBe(1_000)
    expect([0, 1, 19, 20, 500].map(NODE_REDIS_FAIL_FAST.socket.reconnectStrategy)).toEqual([50, 100, 1_000, 1_000, 1_000])
    expect(NODE_REDIS_FAIL_FAST.commandsQueueMaxLength).toBe(10_000)
    expect(NODE_REDIS_FAIL_FAST.socket.writableHighWaterMark).toBe(4 * 1024 * 1024)
  })
})

describeRedis('a redisL2 given no maxValueBytes', () => {
  it('writes a value of 1 MiB less its header, and refuses one over 1 MiB', async () => {
    const prefix = testPrefix('max-value')
    const l2 = redisL2({ url: REDIS_URL, prefix })
    const under = 'x'.repeat(DEFAULT_MAX_VALUE_BYTES - 64)
    const over = 'x'.repeat(DEFAULT_MAX_VALUE_BYTES + 1)
    expect(await l2.set('t', 'under', { kind: 'value', value: under, version: 1, ttl: 5_000 })).toBe(true)
    await expect(l2.set('t', 'over', { kind: 'value', value: over, version: 1, ttl: 5_000 })).rejects.toMatchObject({ code: 'ECHOSTORE_L2_UNFIT', reason: 'size' })
    await l2.close()
    const client = new Redis(REDIS_URL)
    await cleanPrefix(client, prefix)
    client.disconnect()
  })

  it('a bus given no channel listens on echostore:coherence', async () => {
    const bus = redisBus({ url: REDIS_URL })
    await bus.subscribed({ timeout: 5_000 })
    const client = new Redis(REDIS_URL)
    const [, count] = (await client.call('PUBSUB', 'NUMSUB', 'echostore:coherence')) as [string, number]
    expect(Number(count)).toBeGreaterThanOrEqual(1)
    client.disconnect()
    await bus.close()
  })
})
