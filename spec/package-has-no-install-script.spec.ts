/**
 * The published package has no install script: `prepack` builds `dist/`, so an application's
 * `npm install` of EchoStore runs nothing, and in a clone `npm install` builds nothing either.
 */
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'

const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { scripts?: Record<string, string> }

describe('the package manifest', () => {
  it('has no script npm runs on install (preinstall, install, postinstall, prepare)', () => {
    for (const hook of ['preinstall', 'install', 'postinstall', 'prepare', 'preprepare', 'postprepare']) expect(manifest.scripts?.[hook], hook).toBeUndefined()
  })

  it('builds on prepack, with the build script', () => {
    expect(manifest.scripts?.prepack).toBe('npm run build')
    expect(manifest.scripts?.build).toEqual(expect.any(String))
  })
})
