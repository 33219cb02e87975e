/**
 * A `url` where only node-redis is installed: the adapters open node-redis connections of their own
 * (ioredis hidden from a child process, as a missing install is), read and write L2, and the bus
 * subscribes and hears a publish; closing them leaves nothing open.
 */
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { expect, it } from 'vitest'
import { describeRedis, REDIS_URL, testPrefix } from './support/redis.js'

describeRedis('a url with only node-redis installed', () => {
  it('opens node-redis connections: L2 reads its own writes and the bus hears its own publish', async () => {
    const root = join(import.meta.dirname, '..')
    const entry = pathToFileURL(join(root, 'src', 'redis.ts')).href
    const prefix = testPrefix('nr-url')
    const script = `
      const { createRequire } = await import('node:module')
      const { redisBus, redisL2 } = await import(${JSON.stringify(entry)})
      const l2 = redisL2({ url: ${JSON.stringify(REDIS_URL)}, prefix: ${JSON.stringify(prefix)}, timeout: 1000 })
      const bus = redisBus({ url: ${JSON.stringify(REDIS_URL)}, namespace: ${JSON.stringify(prefix)} })
      await bus.subscribed({ timeout: 5000 })
      const heard = new Promise((resolve) => bus.subscribe((d) => d.type === 'message' && resolve(d.message.table)))
      await bus.publish({ table: 'prices', kind: 'clear', origin: 'url' })
      let written = false
      for (let i = 0; i < 50 && !written; i++) written = await l2.set('prices', 'a', { kind: 'value', value: 7, version: 1, ttl: 5000 }).catch(() => false)
      const read = await l2.get('prices', 'a')
      const loaded = Object.keys(createRequire(import.meta.url).cache)
      console.log(JSON.stringify({ value: read?.value, heard: await heard, ioredis: loaded.some((p) => p.includes('/node_modules/ioredis/')), nodeRedis: loaded.some((p) => p.includes('/node_modules/@redis/client/')) }))
      await bus.close()
      await l2.close()`
    const { stdout } = await promisify(execFile)(process.execPath, ['--require', join(root, 'spec', 'support', 'without-ioredis.cjs'), '--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: root,
      timeout: 30_000,
    })
    expect(JSON.parse(stdout.trim().split('\n').at(-1)!)).toEqual({ value: 7, heard: 'prices', ioredis: false, nodeRedis: true })
  })
})
