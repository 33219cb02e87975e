/**
 * ioredis is an optional peer dependency: the core entry never loads it, the Redis entry loads it
 * when imported, and a missing install is an error that names the command to run.
 */
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { EchoStoreError, MissingPeerDependencyError } from '../src/index.js'
import { neitherClient, optional, requireIoredis, requireNodeRedis } from '../src/redis/require-peers.js'

/** A `require` that fails as Node's does when `missing` is not installed. */
function requireWithout(missing: string): (id: string) => unknown {
  return () => {
    throw Object.assign(new Error(`Cannot find module '${missing}'\nRequire stack:\n- /app/node_modules/echostore/dist/esm/ioredis.js`), { code: 'MODULE_NOT_FOUND' })
  }
}

describe('ioredis, the optional peer of echostore/redis', () => {
  it('not installed: a MissingPeerDependencyError that names `npm install ioredis@6`, with the original error as its cause', () => {
    const load = requireWithout('ioredis')
    let thrown: unknown
    try {
      requireIoredis(load)
    } catch (error) {
      thrown = error
    }
    expect(thrown).toBeInstanceOf(MissingPeerDependencyError)
    expect(thrown).toBeInstanceOf(EchoStoreError)
    const error = thrown as MissingPeerDependencyError
    expect(error.code).toBe('ECHOSTORE_PEER_MISSING')
    expect(error.dependency).toBe('ioredis')
    expect(error.entry).toBe('echostore/redis')
    expect(error.message).toMatch(/^echostore: echostore\/redis needs ioredis, which is not installed: run `npm install ioredis@6`/)
    expect((error.cause as { code?: string }).code).toBe('MODULE_NOT_FOUND')
  })

  it('either client library is enough: a missing one is looked for without throwing, a broken one still throws', () => {
    expect(optional(() => requireNodeRedis(requireWithout('redis')))).toBeUndefined()
    expect(() => optional(() => requireNodeRedis(requireWithout('@redis/client')))).toThrow(/^Cannot find module '@redis\/client'/)
  })

  it('neither installed: a url or sentinels is a MissingPeerDependencyError naming both install commands, and the client option', () => {
    const error = neitherClient('redisL2')
    expect(error).toBeInstanceOf(MissingPeerDependencyError)
    expect(error.code).toBe('ECHOSTORE_PEER_MISSING')
    expect(error.message).toMatch(
      /^echostore: redisL2: a `url` or `sentinels` needs a Redis client library, and neither redis \(node-redis\) nor ioredis is installed: run `npm install redis@6` or `npm install ioredis@6`, or pass a client you made as `client`$/,
    )
  })

  it('installed but broken (one of its own dependencies missing): the original error, unchanged', () => {
    const load = requireWithout('denque')
    expect(() => requireIoredis(load)).toThrow(/^Cannot find module 'denque'/)
  })

  it('installed: the ioredis module itself', () => {
    const loaded: string[] = []
    const module = { Redis: class {} }
    expect(requireIoredis((id) => (loaded.push(id), module))).toBe(module)
    expect(loaded).toEqual(['ioredis'])
  })

  it('the core entry runs a table without loading ioredis; importing the Redis entry loads it', async () => {
    const entry = (name: string) => pathToFileURL(join(import.meta.dirname, '..', 'src', name)).href
    const script = `
      import { createRequire } from 'node:module'
      const loaded = () => Object.keys(createRequire(import.meta.url).cache).some((path) => path.includes('/node_modules/ioredis/'))
      const echostore = await import(${JSON.stringify(entry('index.ts'))})
      const table = echostore.createTable({ name: 'x' })
      const value = await table.fetch(1, () => 'loaded')
      await table.close()
      const afterCore = loaded()
      const redis = await import(${JSON.stringify(entry('redis.ts'))})
      console.log(JSON.stringify({ value, afterCore, afterRedis: loaded(), redisL2: typeof redis.redisL2 }))`
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: join(import.meta.dirname, '..') })
    expect(JSON.parse(stdout.trim())).toEqual({ value: 'loaded', afterCore: false, afterRedis: true, redisL2: 'function' })
  })
})
