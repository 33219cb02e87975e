/**
 * The examples import EchoStore by its package name, as user code does, yet run from source with no
 * build: tsconfig.json's `paths` map each entry to src/, and both tsx and vitest honour them.
 */
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

const ENTRIES = {
  echostore: 'index.ts',
  'echostore/store': 'store.ts',
  'echostore/limits': 'limits.ts',
  'echostore/redis': 'redis.ts',
  'echostore/prometheus': 'prometheus.ts',
  'echostore/testing': 'testing.ts',
  'echostore/otel': 'otel.ts',
}
const root = join(import.meta.dirname, '..')

describe('the package name resolves to the source', () => {
  it('under vitest: each entry is the very module under src/', async () => {
    expect(await import('echostore')).toBe(await import('../src/index.js'))
    expect(await import('echostore/store')).toBe(await import('../src/store.js'))
    expect(await import('echostore/limits')).toBe(await import('../src/limits.js'))
    expect(await import('echostore/redis')).toBe(await import('../src/redis.js'))
    expect(await import('echostore/prometheus')).toBe(await import('../src/prometheus.js'))
    expect(await import('echostore/testing')).toBe(await import('../src/testing.js'))
    expect(await import('echostore/otel')).toBe(await import('../src/otel.js'))
  })

  it('under tsx, from the examples folder: each entry resolves to its file under src/, not to the build that the exports map names', async () => {
    const script = `console.log(JSON.stringify(${JSON.stringify(Object.keys(ENTRIES))}.map((name) => import.meta.resolve(name))))`
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: join(root, 'examples') })
    expect(JSON.parse(stdout.trim())).toEqual(Object.values(ENTRIES).map((file) => pathToFileURL(join(root, 'src', file)).href))
  })
})
